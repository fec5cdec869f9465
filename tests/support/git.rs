//! Running the real `git` CLI in tests, with a fixed identity and `main` as default branch.

use std::path::Path;
use std::process::Command;

/// Run `git ARGS` in `dir`; its trimmed stdout, or a panic with its stderr.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=Capstan Test",
            "-c",
            "user.email=test@capstan.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}
