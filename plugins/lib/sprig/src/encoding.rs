//! Encodings and checksums: `b64enc`/`b64dec` and `b32enc`/`b32dec` (Go's standard padded
//! alphabets; a decoding error comes back as the result text, as Sprig does it), and
//! `sha1sum`, `sha256sum`, `sha512sum`, `adler32sum`.

use capstan_gotmpl::funcs::{FuncMap, arg_str};
use capstan_gotmpl::json::BASE64_ALPHABET;
use capstan_gotmpl::value::Value;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

const BASE32_ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

pub fn register(funcs: &mut FuncMap) {
    funcs.add("b64enc", 1, false, |args| {
        Ok(Value::from(base64_encode(arg_str(args, 0)?.as_bytes())))
    });
    funcs.add("b64dec", 1, false, |args| {
        Ok(Value::from(match base64_decode(arg_str(args, 0)?) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(message) => message,
        }))
    });
    funcs.add("b32enc", 1, false, |args| {
        Ok(Value::from(base32_encode(arg_str(args, 0)?.as_bytes())))
    });
    funcs.add("b32dec", 1, false, |args| {
        Ok(Value::from(match base32_decode(arg_str(args, 0)?) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(message) => message,
        }))
    });
    funcs.add("sha1sum", 1, false, |args| {
        Ok(Value::from(hex(&Sha1::digest(arg_str(args, 0)?))))
    });
    funcs.add("sha256sum", 1, false, |args| {
        Ok(Value::from(hex(&Sha256::digest(arg_str(args, 0)?))))
    });
    funcs.add("sha512sum", 1, false, |args| {
        Ok(Value::from(hex(&Sha512::digest(arg_str(args, 0)?))))
    });
    funcs.add("adler32sum", 1, false, |args| {
        Ok(Value::from(
            adler32(arg_str(args, 0)?.as_bytes()).to_string(),
        ))
    });
}

/// Lower-case hex, as `hex.EncodeToString`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `hash/adler32.Checksum`.
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for byte in chunk {
            a += u32::from(*byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// `base64.StdEncoding.EncodeToString`.
pub use capstan_gotmpl::json::base64_std as base64_encode;

fn corrupt(encoding: &str, offset: usize) -> String {
    format!("illegal {encoding} data at input byte {offset}")
}

/// `base64.StdEncoding.DecodeString`: newlines are skipped; errors are Go's
/// `illegal base64 data at input byte N`.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let src = text.as_bytes();
    let value_of = |c: u8| BASE64_ALPHABET.iter().position(|x| *x == c);
    let mut out = Vec::new();
    let mut si = 0;
    loop {
        let mut quantum = [0u8; 4];
        let mut j = 0;
        let mut finished = false;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(corrupt("base64", si - j));
            }
            let c = src[si];
            si += 1;
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c == b'=' {
                match j {
                    0 | 1 => return Err(corrupt("base64", si - 1)),
                    2 => {
                        while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                            si += 1;
                        }
                        if si == src.len() {
                            return Err(corrupt("base64", src.len()));
                        }
                        if src[si] != b'=' {
                            return Err(corrupt("base64", si - 1));
                        }
                        si += 1;
                    }
                    _ => {}
                }
                while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                    si += 1;
                }
                if si < src.len() {
                    return Err(corrupt("base64", si));
                }
                finished = true;
                break;
            }
            match value_of(c) {
                Some(v) => quantum[j] = v as u8,
                None => return Err(corrupt("base64", si - 1)),
            }
            j += 1;
        }
        let n = (u32::from(quantum[0]) << 18)
            | (u32::from(quantum[1]) << 12)
            | (u32::from(quantum[2]) << 6)
            | u32::from(quantum[3]);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let produced = if finished { j - 1 } else { 3 };
        out.extend_from_slice(&bytes[..produced]);
        if finished {
            return Ok(out);
        }
    }
}

/// `base32.StdEncoding.EncodeToString`.
fn base32_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(5) {
        let mut block = [0u8; 5];
        block[..chunk.len()].copy_from_slice(chunk);
        let n = block.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let symbols = (chunk.len() * 8).div_ceil(5);
        for k in 0..8 {
            if k < symbols {
                out.push(char::from(
                    BASE32_ALPHABET[((n >> (35 - 5 * k)) & 31) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `base32.StdEncoding.DecodeString` (newlines removed first), with Go's error offsets.
fn base32_decode(text: &str) -> Result<Vec<u8>, String> {
    let stripped: Vec<u8> = text
        .bytes()
        .filter(|b| *b != b'\n' && *b != b'\r')
        .collect();
    let olen = stripped.len();
    let mut src: &[u8] = &stripped;
    let mut out = Vec::new();
    let mut end = false;
    while !src.is_empty() && !end {
        let mut quantum = [0u8; 8];
        let mut used = 8;
        let mut j = 0;
        while j < 8 {
            if src.is_empty() {
                return Err(corrupt("base32", olen - j));
            }
            let c = src[0];
            src = &src[1..];
            if c == b'=' && j >= 2 && src.len() < 8 {
                if src.len() + j < 7 {
                    return Err(corrupt("base32", olen));
                }
                for k in 0..(7 - j) {
                    if src.len() > k && src[k] != b'=' {
                        return Err(corrupt("base32", olen - src.len() + k - 1));
                    }
                }
                used = j;
                end = true;
                if matches!(used, 1 | 3 | 6) {
                    return Err(corrupt("base32", olen - src.len() - 1));
                }
                break;
            }
            match BASE32_ALPHABET.iter().position(|x| *x == c) {
                Some(v) => quantum[j] = v as u8,
                None => return Err(corrupt("base32", olen - src.len() - 1)),
            }
            j += 1;
        }
        let n = quantum
            .iter()
            .fold(0u64, |acc, v| (acc << 5) | u64::from(*v));
        let bytes = n.to_be_bytes();
        let produced = match used {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            _ => 0,
        };
        out.extend_from_slice(&bytes[3..3 + produced]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::testing::*;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("b64enc", &[s("hello")]), "aGVsbG8=");
        assert_eq!(show("b64dec", &[s("aGVsbG8=")]), "hello");
        assert_eq!(show("b32enc", &[s("hi")]), "NBUQ====");
        assert_eq!(show("b32dec", &[s("NBUQ====")]), "hi");
        assert_eq!(
            show("sha1sum", &[s("x")]),
            "11f6ad8ec52a2984abaafd7c3b516503785c2072"
        );
        assert_eq!(
            show("sha256sum", &[s("x")]),
            "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
        );
        assert_eq!(show("adler32sum", &[s("x")]), "7929977");
    }

    #[test]
    fn go_decoding_errors() {
        // Go's encoding/base64 and encoding/base32 CorruptInputError offsets.
        assert_eq!(
            show("b64dec", &[s("aGVsbG8")]),
            "illegal base64 data at input byte 4"
        );
        assert_eq!(
            show("b64dec", &[s("a!")]),
            "illegal base64 data at input byte 1"
        );
        assert_eq!(
            show("b64dec", &[s("aGk=x")]),
            "illegal base64 data at input byte 4"
        );
        assert_eq!(show("b64dec", &[s("aGVs\nbG8=")]), "hello");
        assert_eq!(show("b64dec", &[s("")]), "");
        assert_eq!(
            show("b32dec", &[s("NBUQ")]),
            "illegal base32 data at input byte 0"
        );
        assert_eq!(
            show("b32dec", &[s("NB!Q====")]),
            "illegal base32 data at input byte 2"
        );
        assert_eq!(show("b64enc", &[s("ab")]), "YWI=");
        assert_eq!(show("b32enc", &[s("hello")]), "NBSWY3DP");
        assert_eq!(show("b32dec", &[s("NBSWY3DP")]), "hello");
        assert_eq!(
            show("sha512sum", &[s("")]),
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        );
    }
}
