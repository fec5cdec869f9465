//! Test certificates made with the `openssl` CLI: a CA and a server certificate it issued
//! for 127.0.0.1.

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

/// A CA (`ca.crt`) and a certificate it signed for 127.0.0.1 (`server.crt`, `server.key`).
pub fn certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=capstan test CA",
    ]);
    openssl(dir, &ca);
    let mut request = vec!["req"];
    request.extend(ec);
    request.extend([
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(dir, &request);
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    );
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
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut request = vec!["req"];
    request.extend(ec);
    request.extend([
        "-keyout",
        "intermediate.key",
        "-out",
        "intermediate.csr",
        "-subj",
        "/CN=capstan test intermediate CA",
    ]);
    openssl(dir, &request);
    std::fs::write(
        dir.join("intermediate.ext"),
        "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "intermediate.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "intermediate.crt",
            "-days",
            "2",
            "-extfile",
            "intermediate.ext",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "intermediate.crt",
            "-CAkey",
            "intermediate.key",
            "-CAcreateserial",
            "-out",
            "leaf.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    );
    let mut chain = std::fs::read(dir.join("leaf.crt")).unwrap();
    chain.extend(std::fs::read(dir.join("intermediate.crt")).unwrap());
    std::fs::write(dir.join("chain.crt"), chain).unwrap();
}
