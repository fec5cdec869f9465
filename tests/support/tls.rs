//! Test certificates made with the `openssl` CLI: a CA and a server certificate it issued
//! for 127.0.0.1, optionally through an intermediate CA.

use std::path::Path;
use std::process::Command;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new P-256 key (`{name}.key`) and, with `self_signed`, a CA certificate (`{name}.crt`),
/// else a signing request (`{name}.csr`) for `subject`.
fn new_key(dir: &Path, name: &str, subject: &str, self_signed: bool) {
    let key = format!("{name}.key");
    let out = format!("{name}.{}", if self_signed { "crt" } else { "csr" });
    let mut args = vec!["req"];
    if self_signed {
        args.extend(["-x509", "-days", "2"]);
    }
    args.extend([
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        &key,
        "-out",
        &out,
        "-subj",
        subject,
    ]);
    openssl(dir, &args);
}

/// Sign `{name}.csr` with the CA `{ca}.crt`/`{ca}.key` into `{out}.crt`, with the
/// extensions of file `extensions`.
fn sign(dir: &Path, name: &str, ca: &str, out: &str, extensions: &str) {
    let (csr, ca_crt, ca_key, crt) = (
        format!("{name}.csr"),
        format!("{ca}.crt"),
        format!("{ca}.key"),
        format!("{out}.crt"),
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_crt,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-out",
            &crt,
            "-days",
            "2",
            "-extfile",
            extensions,
        ],
    );
}

/// A CA (`ca.crt`) and a certificate it signed for 127.0.0.1 (`server.crt`, `server.key`).
pub fn certificates(dir: &Path) {
    new_key(dir, "ca", "/CN=capstan test CA", true);
    new_key(dir, "server", "/CN=127.0.0.1", false);
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    sign(dir, "server", "ca", "server", "san.ext");
}

/// A root CA (`ca.crt`), an intermediate CA it signed, and a certificate the intermediate
/// signed for 127.0.0.1 (`server.key`; `chain.crt` holds the server certificate followed by
/// the intermediate's, as a server sends them).
#[allow(
    dead_code,
    reason = "not every test crate including this file serves a chain"
)]
pub fn certificates_with_intermediate(dir: &Path) {
    certificates(dir);
    new_key(
        dir,
        "intermediate",
        "/CN=capstan test intermediate CA",
        false,
    );
    std::fs::write(
        dir.join("intermediate.ext"),
        "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n",
    )
    .unwrap();
    sign(
        dir,
        "intermediate",
        "ca",
        "intermediate",
        "intermediate.ext",
    );
    sign(dir, "server", "intermediate", "leaf", "san.ext");
    let mut chain = std::fs::read(dir.join("leaf.crt")).unwrap();
    chain.extend(std::fs::read(dir.join("intermediate.crt")).unwrap());
    std::fs::write(dir.join("chain.crt"), chain).unwrap();
}
