//! Keys and certificates: `genPrivateKey` (RSA 4096, ECDSA P-256, Ed25519; PEM like Go's
//! `x509` marshalling), `genCA`, `genSelfSignedCert`, `genSignedCert` (RSA 2048 keys, or a
//! given PEM key with the `WithKey` variants) and `buildCustomCert`. The certificates carry
//! the extensions Sprig's Go template asks for (key usages, server/client auth, CA basic
//! constraints, SANs from the IP and DNS lists, key identifiers), signed with the issuer's
//! RSA, P-256 or Ed25519 key. Their bytes are random in Helm too; only their shape can
//! match. DSA keys are not supported.

use std::rc::Rc;
use std::time::Duration;

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_int, arg_str, wrong_type};
use capstan_gotmpl::value::{Map, Object, Value};
use x509_cert::Certificate;
use x509_cert::builder::{Builder, CertificateBuilder, Profile};
use x509_cert::der::asn1::{Any, Ia5String, OctetString, SetOfVec};
use x509_cert::der::referenced::OwnedToRef;
use x509_cert::der::{Decode, Encode, Tag};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};
use x509_cert::name::{Name, RdnSequence, RelativeDistinguishedName};
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::{ObjectIdentifier, SubjectPublicKeyInfoOwned};
use x509_cert::time::Validity;

use crate::crypto::{SystemRandom, random_bytes};
use crate::encoding::{base64_decode, base64_encode};

use x509_cert::der::oid::db::rfc4519::CN as COMMON_NAME;
use x509_cert::der::oid::db::rfc5280::{
    ID_CE_SUBJECT_KEY_IDENTIFIER as SUBJECT_KEY_IDENTIFIER, ID_KP_CLIENT_AUTH as CLIENT_AUTH,
    ID_KP_SERVER_AUTH as SERVER_AUTH,
};
use x509_cert::der::oid::db::rfc5912::SECP_256_R_1 as P256_CURVE;

/// Where RSA keys come from: a function from a size in bits to a new key as PKCS#1 DER, or
/// an error text. A WebAssembly guest can hand generation to a native host this way.
pub type RsaKeySource = Rc<dyn Fn(usize) -> Result<Vec<u8>, String>>;

/// Where RSA signatures are made: a function from a private key (PKCS#1 DER) and a message
/// to the message's PKCS#1 v1.5 SHA-256 signature, or an error text. A WebAssembly guest
/// can hand signing to a native host this way.
pub type RsaSignFn = Rc<dyn Fn(&[u8], &[u8]) -> Result<Vec<u8>, String>>;

/// A new RSA key of `bits` bits (exponent 65537) as PKCS#1 DER, generated here: the default
/// [`RsaKeySource`] (`capstan-rsakey`'s prime search).
pub fn generate_rsa_key_der(bits: usize) -> Result<Vec<u8>, String> {
    capstan_rsakey::generate_der(bits)
}

/// A key of `bits` bits from `source`, parsed for signing.
fn rsa_key(source: &RsaKeySource, bits: usize) -> Result<rsa::RsaPrivateKey, String> {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    let der = source(bits)?;
    let key = rsa::RsaPrivateKey::from_pkcs1_der(&der).map_err(|e| e.to_string())?;
    use rsa::traits::PublicKeyParts;
    if key.n().bits() != bits {
        return Err(format!(
            "key source gave a {}-bit key for {bits} bits",
            key.n().bits()
        ));
    }
    Ok(key)
}

pub fn register(funcs: &mut FuncMap, rsa_keys: Option<RsaKeySource>, rsa_sign: Option<RsaSignFn>) {
    let rsa_keys: RsaKeySource = rsa_keys.unwrap_or_else(|| Rc::new(generate_rsa_key_der));
    let keys = rsa_keys.clone();
    funcs.add("genPrivateKey", 1, false, move |args| {
        let kind = arg_str(args, 0)?;
        let key = match kind {
            "" | "rsa" => rsa_key(&keys, 4096).map(PrivateKey::Rsa),
            "ecdsa" => Ok(PrivateKey::Ec(p256::SecretKey::random(&mut SystemRandom))),
            "ed25519" => Ok(PrivateKey::Ed25519(ed25519_dalek::SigningKey::generate(
                &mut SystemRandom,
            ))),
            "dsa" => {
                return Ok(Value::from(
                    "failed to generate dsa params: DSA is not supported",
                ));
            }
            other => return Ok(Value::from(format!("Unknown type {other}"))),
        };
        Ok(Value::from(match key {
            Ok(key) => key.to_pem().unwrap_or_default(),
            Err(e) => format!("failed to generate private key: {e}"),
        }))
    });
    let (keys, sign) = (rsa_keys.clone(), rsa_sign.clone());
    funcs.add("genCA", 2, false, move |args| {
        let (cn, days) = (arg_str(args, 0)?, arg_int(args, 1)?);
        let key = new_rsa_key(&keys)?;
        certificate_authority(cn, days, key, sign.as_ref())
    });
    let sign = rsa_sign.clone();
    funcs.add("genCAWithKey", 3, false, move |args| {
        let (cn, days, pem) = (arg_str(args, 0)?, arg_int(args, 1)?, arg_str(args, 2)?);
        let key = parse_private_key(pem)
            .map_err(|e| FuncError::new(format!("parsing private key: {e}")))?;
        certificate_authority(cn, days, key, sign.as_ref())
    });
    let (keys, sign) = (rsa_keys.clone(), rsa_sign.clone());
    funcs.add("genSelfSignedCert", 4, false, move |args| {
        let request = CertRequest::from_args(args)?;
        self_signed(&request, new_rsa_key(&keys)?, sign.as_ref())
    });
    let sign = rsa_sign.clone();
    funcs.add("genSelfSignedCertWithKey", 5, false, move |args| {
        let request = CertRequest::from_args(args)?;
        let key = parse_private_key(arg_str(args, 4)?)
            .map_err(|e| FuncError::new(format!("parsing private key: {e}")))?;
        self_signed(&request, key, sign.as_ref())
    });
    let sign = rsa_sign.clone();
    funcs.add("genSignedCert", 5, false, move |args| {
        let request = CertRequest::from_args(args)?;
        let ca = arg_certificate(args, 4)?;
        signed(&request, &ca, new_rsa_key(&rsa_keys)?, sign.as_ref())
    });
    funcs.add("genSignedCertWithKey", 6, false, move |args| {
        let request = CertRequest::from_args(args)?;
        let ca = arg_certificate(args, 4)?;
        let key = parse_private_key(arg_str(args, 5)?)
            .map_err(|e| FuncError::new(format!("parsing private key: {e}")))?;
        signed(&request, &ca, key, rsa_sign.as_ref())
    });
    funcs.add("buildCustomCert", 2, false, |args| {
        let (cert64, key64) = (arg_str(args, 0)?, arg_str(args, 1)?);
        let cert = base64_decode(cert64)
            .map_err(|_| FuncError::new("unable to decode base64 certificate"))?;
        let key = base64_decode(key64)
            .map_err(|_| FuncError::new("unable to decode base64 private key"))?;
        let cert_text = String::from_utf8_lossy(&cert).into_owned();
        let key_text = String::from_utf8_lossy(&key).into_owned();
        let (_, der) =
            pem_decode(&cert_text).ok_or_else(|| FuncError::new("unable to decode certificate"))?;
        Certificate::from_der(&der).map_err(|e| {
            FuncError::new(format!(
                "error parsing certificate: decodedCert.Bytes: x509: {e}"
            ))
        })?;
        parse_private_key(&key_text)
            .map_err(|e| FuncError::new(format!("error parsing private key: {e}")))?;
        Ok(CertificatePair {
            cert: cert_text,
            key: key_text,
        }
        .into_value())
    });
}

fn new_rsa_key(source: &RsaKeySource) -> Result<PrivateKey, FuncError> {
    rsa_key(source, 2048)
        .map(PrivateKey::Rsa)
        .map_err(|e| FuncError::new(format!("error generating rsa key: {e}")))
}

/// A private key of a type Go's `x509` can marshal.
enum PrivateKey {
    Rsa(rsa::RsaPrivateKey),
    Ec(p256::SecretKey),
    Ed25519(ed25519_dalek::SigningKey),
}

impl PrivateKey {
    /// Sprig's `pemBlockForKey`: PKCS#1 for RSA, SEC 1 for EC, PKCS#8 otherwise.
    fn to_pem(&self) -> Result<String, String> {
        match self {
            PrivateKey::Rsa(key) => {
                use rsa::pkcs1::EncodeRsaPrivateKey;
                let der = key.to_pkcs1_der().map_err(|e| e.to_string())?;
                Ok(pem_encode("RSA PRIVATE KEY", der.as_bytes()))
            }
            PrivateKey::Ec(key) => {
                // Go's MarshalECPrivateKey names the curve and includes the public point.
                use p256::elliptic_curve::sec1::ToEncodedPoint;
                use x509_cert::der::Encode;
                let secret = key.to_bytes();
                let public = key.public_key().to_encoded_point(false);
                let document = sec1::EcPrivateKey {
                    private_key: &secret,
                    parameters: Some(sec1::EcParameters::NamedCurve(P256_CURVE)),
                    public_key: Some(public.as_bytes()),
                };
                let der = document.to_der().map_err(|e| e.to_string())?;
                Ok(pem_encode("EC PRIVATE KEY", &der))
            }
            PrivateKey::Ed25519(key) => {
                use ed25519_dalek::pkcs8::EncodePrivateKey;
                let der = key.to_pkcs8_der().map_err(|e| e.to_string())?;
                Ok(pem_encode("PRIVATE KEY", der.as_bytes()))
            }
        }
    }

    fn public_key_info(&self) -> Result<SubjectPublicKeyInfoOwned, String> {
        let der = match self {
            PrivateKey::Rsa(key) => {
                use rsa::pkcs8::EncodePublicKey;
                rsa::RsaPublicKey::from(key)
                    .to_public_key_der()
                    .map_err(|e| e.to_string())?
            }
            PrivateKey::Ec(key) => {
                use p256::pkcs8::EncodePublicKey;
                key.public_key()
                    .to_public_key_der()
                    .map_err(|e| e.to_string())?
            }
            PrivateKey::Ed25519(key) => {
                use ed25519_dalek::pkcs8::EncodePublicKey;
                key.verifying_key()
                    .to_public_key_der()
                    .map_err(|e| e.to_string())?
            }
        };
        SubjectPublicKeyInfoOwned::from_der(der.as_bytes()).map_err(|e| e.to_string())
    }
}

/// Sprig's `parsePrivateKeyPEM`, with its error texts.
fn parse_private_key(pem: &str) -> Result<PrivateKey, String> {
    let (kind, der) = pem_decode(pem).ok_or_else(|| "no PEM data in input".to_owned())?;
    if kind == "PRIVATE KEY" {
        use rsa::pkcs8::DecodePrivateKey;
        if let Ok(key) = rsa::RsaPrivateKey::from_pkcs8_der(&der) {
            return Ok(PrivateKey::Rsa(key));
        }
        if let Ok(key) = p256::SecretKey::from_pkcs8_der(&der) {
            return Ok(PrivateKey::Ec(key));
        }
        return ed25519_dalek::SigningKey::from_pkcs8_der(&der)
            .map(PrivateKey::Ed25519)
            .map_err(|e| format!("decoding PEM as PKCS#8: x509: {e}"));
    }
    let Some(algorithm) = kind.strip_suffix(" PRIVATE KEY") else {
        return Err(format!("no private key data in PEM block of type {kind}"));
    };
    match algorithm {
        "RSA" => {
            use rsa::pkcs1::DecodeRsaPrivateKey;
            rsa::RsaPrivateKey::from_pkcs1_der(&der)
                .map(PrivateKey::Rsa)
                .map_err(|e| format!("parsing RSA private key from PEM: x509: {e}"))
        }
        "EC" => p256::SecretKey::from_sec1_der(&der)
            .map(PrivateKey::Ec)
            .map_err(|e| format!("parsing EC private key from PEM: x509: {e}")),
        "DSA" => Err("parsing DSA private key from PEM: DSA is not supported".into()),
        _ => Err(format!("invalid private key type {kind}")),
    }
}

/// `pem.EncodeToMemory`: base64 in 64-character lines between BEGIN/END lines.
fn pem_encode(kind: &str, der: &[u8]) -> String {
    let body = base64_encode(der);
    let mut out = format!("-----BEGIN {kind}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {kind}-----\n"));
    out
}

/// `pem.Decode` of the first block: its type and bytes.
fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let kind_end = rest.find("-----")?;
    let kind = &rest[..kind_end];
    let body_start = &rest[kind_end + 5..];
    let end_marker = format!("-----END {kind}-----");
    let body_end = body_start.find(&end_marker)?;
    let body: String = body_start[..body_end]
        .lines()
        .filter(|line| !line.contains(':'))
        .flat_map(|line| line.chars().filter(|c| !c.is_whitespace()))
        .collect();
    let der = base64_decode(&body).ok()?;
    Some((kind.to_owned(), der))
}

/// Sprig's `certificate` struct: `.Cert` and `.Key` PEM strings.
#[derive(Clone, Debug)]
struct CertificatePair {
    cert: String,
    key: String,
}

impl CertificatePair {
    fn into_value(self) -> Value {
        Value::Object(Rc::new(self))
    }
}

impl Object for CertificatePair {
    fn type_name(&self) -> String {
        "sprig.certificate".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::from(self.cert.as_str())),
            "Key" => Some(Value::from(self.key.as_str())),
            _ => None,
        }
    }
    fn format(&self) -> String {
        format!("{{{} {}}}", self.cert, self.key)
    }
    fn to_data(&self) -> Value {
        let mut map = Map::new();
        map.insert("Cert".into(), Value::from(self.cert.as_str()));
        map.insert("Key".into(), Value::from(self.key.as_str()));
        Value::from(map)
    }
}

/// A `certificate` parameter.
fn arg_certificate(args: &[Value], i: usize) -> Result<CertificatePair, FuncError> {
    let value = arg(args, i);
    if let Value::Object(object) = &value
        && object.type_name() == "sprig.certificate"
    {
        let text = |name: &str| {
            object
                .field(name)
                .and_then(|v| v.as_str().map(str::to_owned))
        };
        if let (Some(cert), Some(key)) = (text("Cert"), text("Key")) {
            return Ok(CertificatePair { cert, key });
        }
    }
    Err(wrong_type("sprig.certificate", &value))
}

/// The common arguments of the certificate functions: CN, IPs, DNS names, days.
struct CertRequest {
    common_name: String,
    ips: Vec<std::net::IpAddr>,
    dns_names: Vec<String>,
    days: i64,
}

impl CertRequest {
    fn from_args(args: &[Value]) -> Result<CertRequest, FuncError> {
        let common_name = arg_str(args, 0)?.to_owned();
        let ips = list_arg(args, 1)?
            .iter()
            .map(|ip| match ip {
                Value::String(s) => s
                    .parse::<std::net::IpAddr>()
                    .map_err(|_| FuncError::new(format!("error parsing ip: {s}"))),
                other => Err(FuncError::new(format!(
                    "error parsing ip: {} is not a string",
                    other.to_go_string()
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let dns_names = list_arg(args, 2)?
            .iter()
            .map(|name| match name {
                Value::String(s) => Ok(s.to_string()),
                other => Err(FuncError::new(format!(
                    "error processing alternate dns name: {} is not a string",
                    other.to_go_string()
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CertRequest {
            common_name,
            ips,
            dns_names,
            days: arg_int(args, 3)?,
        })
    }
}

fn list_arg(args: &[Value], i: usize) -> Result<Vec<Value>, FuncError> {
    match args.get(i) {
        Some(Value::List(items)) => Ok(items.as_ref().clone()),
        Some(Value::Nil) | None => Ok(Vec::new()),
        Some(other) => Err(wrong_type("[]interface {}", other)),
    }
}

fn subject_name(common_name: &str) -> Result<Name, String> {
    if common_name.is_empty() {
        return Ok(RdnSequence(Vec::new()));
    }
    let printable = common_name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" '()+,-./:=?".contains(&b));
    let tag = if printable {
        Tag::PrintableString
    } else {
        Tag::Utf8String
    };
    let value = Any::new(tag, common_name.as_bytes()).map_err(|e| e.to_string())?;
    let attribute = x509_cert::attr::AttributeTypeAndValue {
        oid: COMMON_NAME,
        value,
    };
    let set = SetOfVec::try_from(vec![attribute]).map_err(|e| e.to_string())?;
    Ok(RdnSequence(vec![RelativeDistinguishedName(set)]))
}

fn cert_error(e: impl std::fmt::Display) -> FuncError {
    FuncError::new(format!("error creating certificate: {e}"))
}

/// Issue a certificate for `key` signed by `signer`, as Sprig's `getCertAndKey` does with
/// Go's `x509.CreateCertificate`.
fn issue(
    request: &CertRequest,
    is_ca: bool,
    key: &PrivateKey,
    issuer: Option<(Name, Option<OctetString>)>,
    signer: &PrivateKey,
    rsa_sign: Option<&RsaSignFn>,
) -> Result<CertificatePair, FuncError> {
    let mut serial = random_bytes(16);
    serial[0] &= 0x7f;
    let serial = SerialNumber::new(&serial).map_err(cert_error)?;
    let days = request.days.max(0) as u64;
    let validity = Validity::from_now(Duration::from_secs(days * 86_400)).map_err(cert_error)?;
    let subject = subject_name(&request.common_name).map_err(cert_error)?;
    let spki = key.public_key_info().map_err(cert_error)?;
    let (issuer_name, authority_key) = match issuer {
        Some((name, key_id)) => (Some(name), key_id),
        None => (None, None),
    };
    let mut usages = KeyUsages::KeyEncipherment | KeyUsages::DigitalSignature;
    if is_ca {
        usages |= KeyUsages::KeyCertSign;
    }
    let extensions =
        |builder: &mut dyn FnMut(Extension) -> Result<(), FuncError>| -> Result<(), FuncError> {
            builder(Extension::KeyUsage(KeyUsage(usages)))?;
            builder(Extension::ExtendedKeyUsage(GoExtendedKeyUsage(
                ExtendedKeyUsage(vec![SERVER_AUTH, CLIENT_AUTH]),
            )))?;
            builder(Extension::BasicConstraints(BasicConstraints {
                ca: is_ca,
                path_len_constraint: None,
            }))?;
            if is_ca {
                let ski =
                    SubjectKeyIdentifier::try_from(spki.owned_to_ref()).map_err(cert_error)?;
                builder(Extension::SubjectKeyIdentifier(ski))?;
            }
            if let Some(key_id) = &authority_key {
                builder(Extension::AuthorityKeyIdentifier(AuthorityKeyIdentifier {
                    key_identifier: Some(key_id.clone()),
                    authority_cert_issuer: None,
                    authority_cert_serial_number: None,
                }))?;
            }
            let mut names = Vec::new();
            for name in &request.dns_names {
                names.push(GeneralName::DnsName(
                    Ia5String::new(name).map_err(cert_error)?,
                ));
            }
            for ip in &request.ips {
                let octets = match ip {
                    std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
                    std::net::IpAddr::V6(v6) => v6.octets().to_vec(),
                };
                names.push(GeneralName::IpAddress(
                    OctetString::new(octets).map_err(cert_error)?,
                ));
            }
            if !names.is_empty() {
                builder(Extension::SubjectAltName(SubjectAltName(names)))?;
            }
            Ok(())
        };
    let profile = Profile::Manual {
        issuer: issuer_name,
    };
    let der = match signer {
        PrivateKey::Rsa(private) => {
            let signing = RsaSigner {
                identity: rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new(private.clone()),
                key: private,
                offload: rsa_sign,
            };
            let mut builder =
                CertificateBuilder::new(profile, serial, validity, subject, spki.clone(), &signing)
                    .map_err(cert_error)?;
            extensions(&mut |ext| ext.add_to(&mut builder))?;
            builder
                .build::<rsa::pkcs1v15::Signature>()
                .map_err(cert_error)?
                .to_der()
        }
        PrivateKey::Ec(secret) => {
            let signing = p256::ecdsa::SigningKey::from(secret);
            let mut builder =
                CertificateBuilder::new(profile, serial, validity, subject, spki.clone(), &signing)
                    .map_err(cert_error)?;
            extensions(&mut |ext| ext.add_to(&mut builder))?;
            builder
                .build::<p256::ecdsa::DerSignature>()
                .map_err(cert_error)?
                .to_der()
        }
        PrivateKey::Ed25519(secret) => {
            let signing = Ed25519Signer(secret.clone());
            let mut builder =
                CertificateBuilder::new(profile, serial, validity, subject, spki.clone(), &signing)
                    .map_err(cert_error)?;
            extensions(&mut |ext| ext.add_to(&mut builder))?;
            builder
                .build::<Ed25519Signature>()
                .map_err(cert_error)?
                .to_der()
        }
    }
    .map_err(cert_error)?;
    let key_pem = key
        .to_pem()
        .map_err(|e| FuncError::new(format!("error pem-encoding key: {e}")))?;
    Ok(CertificatePair {
        cert: pem_encode("CERTIFICATE", &der),
        key: key_pem,
    })
}

/// Extended key usage marked non-critical, as Go's `x509.CreateCertificate` writes it.
struct GoExtendedKeyUsage(ExtendedKeyUsage);

impl x509_cert::der::oid::AssociatedOid for GoExtendedKeyUsage {
    const OID: ObjectIdentifier = <ExtendedKeyUsage as x509_cert::der::oid::AssociatedOid>::OID;
}

impl Encode for GoExtendedKeyUsage {
    fn encoded_len(&self) -> x509_cert::der::Result<x509_cert::der::Length> {
        self.0.encoded_len()
    }

    fn encode(&self, writer: &mut impl x509_cert::der::Writer) -> x509_cert::der::Result<()> {
        self.0.encode(writer)
    }
}

impl x509_cert::ext::AsExtension for GoExtendedKeyUsage {
    fn critical(&self, _subject: &Name, _extensions: &[x509_cert::ext::Extension]) -> bool {
        false
    }
}

/// An RSA key as the certificate builder wants a signer: the `rsa` crate's signing key
/// names the algorithm and the public key, and the offload (else `capstan-rsakey`, here)
/// makes the signature.
struct RsaSigner<'k> {
    identity: rsa::pkcs1v15::SigningKey<sha2::Sha256>,
    key: &'k rsa::RsaPrivateKey,
    offload: Option<&'k RsaSignFn>,
}

impl signature::Signer<rsa::pkcs1v15::Signature> for RsaSigner<'_> {
    fn try_sign(&self, message: &[u8]) -> Result<rsa::pkcs1v15::Signature, signature::Error> {
        let bytes = match self.offload {
            Some(sign) => {
                use rsa::pkcs1::EncodeRsaPrivateKey;
                let der = self
                    .key
                    .to_pkcs1_der()
                    .map_err(signature::Error::from_source)?;
                sign(der.as_bytes(), message)
            }
            None => capstan_rsakey::sign_sha256(self.key, message),
        }
        .map_err(signature::Error::from_source)?;
        rsa::pkcs1v15::Signature::try_from(bytes.as_slice())
    }
}

impl signature::Keypair for RsaSigner<'_> {
    type VerifyingKey = rsa::pkcs1v15::VerifyingKey<sha2::Sha256>;

    fn verifying_key(&self) -> Self::VerifyingKey {
        self.identity.verifying_key()
    }
}

impl x509_cert::spki::DynSignatureAlgorithmIdentifier for RsaSigner<'_> {
    fn signature_algorithm_identifier(
        &self,
    ) -> x509_cert::spki::Result<x509_cert::spki::AlgorithmIdentifierOwned> {
        self.identity.signature_algorithm_identifier()
    }
}

/// An Ed25519 key as the certificate builder wants a signer.
struct Ed25519Signer(ed25519_dalek::SigningKey);

/// An Ed25519 signature encoded as the certificate's signature bit string.
struct Ed25519Signature(ed25519_dalek::Signature);

impl x509_cert::spki::SignatureBitStringEncoding for Ed25519Signature {
    fn to_bitstring(&self) -> x509_cert::der::Result<x509_cert::der::asn1::BitString> {
        x509_cert::der::asn1::BitString::from_bytes(&self.0.to_bytes())
    }
}

impl signature::Signer<Ed25519Signature> for Ed25519Signer {
    fn try_sign(&self, message: &[u8]) -> Result<Ed25519Signature, signature::Error> {
        Ok(Ed25519Signature(self.0.sign(message)))
    }
}

impl signature::Keypair for Ed25519Signer {
    type VerifyingKey = ed25519_dalek::VerifyingKey;

    fn verifying_key(&self) -> Self::VerifyingKey {
        self.0.verifying_key()
    }
}

impl x509_cert::spki::DynSignatureAlgorithmIdentifier for Ed25519Signer {
    fn signature_algorithm_identifier(
        &self,
    ) -> x509_cert::spki::Result<x509_cert::spki::AlgorithmIdentifierOwned> {
        self.0.signature_algorithm_identifier()
    }
}

/// One extension for the builder.
enum Extension {
    KeyUsage(KeyUsage),
    ExtendedKeyUsage(GoExtendedKeyUsage),
    BasicConstraints(BasicConstraints),
    SubjectKeyIdentifier(SubjectKeyIdentifier),
    AuthorityKeyIdentifier(AuthorityKeyIdentifier),
    SubjectAltName(SubjectAltName),
}

impl Extension {
    fn add_to<S>(self, builder: &mut CertificateBuilder<'_, S>) -> Result<(), FuncError>
    where
        S: x509_cert::spki::DynSignatureAlgorithmIdentifier + signature::Keypair,
        S::VerifyingKey: x509_cert::spki::EncodePublicKey,
    {
        match self {
            Extension::KeyUsage(e) => builder.add_extension(&e),
            Extension::ExtendedKeyUsage(e) => builder.add_extension(&e),
            Extension::BasicConstraints(e) => builder.add_extension(&e),
            Extension::SubjectKeyIdentifier(e) => builder.add_extension(&e),
            Extension::AuthorityKeyIdentifier(e) => builder.add_extension(&e),
            Extension::SubjectAltName(e) => builder.add_extension(&e),
        }
        .map_err(cert_error)
    }
}

fn certificate_authority(
    cn: &str,
    days: i64,
    key: PrivateKey,
    rsa_sign: Option<&RsaSignFn>,
) -> Result<Value, FuncError> {
    let request = CertRequest {
        common_name: cn.to_owned(),
        ips: Vec::new(),
        dns_names: Vec::new(),
        days,
    };
    issue(&request, true, &key, None, &key, rsa_sign).map(CertificatePair::into_value)
}

fn self_signed(
    request: &CertRequest,
    key: PrivateKey,
    rsa_sign: Option<&RsaSignFn>,
) -> Result<Value, FuncError> {
    issue(request, false, &key, None, &key, rsa_sign).map(CertificatePair::into_value)
}

fn signed(
    request: &CertRequest,
    ca: &CertificatePair,
    key: PrivateKey,
    rsa_sign: Option<&RsaSignFn>,
) -> Result<Value, FuncError> {
    let (_, der) =
        pem_decode(&ca.cert).ok_or_else(|| FuncError::new("unable to decode certificate"))?;
    let ca_cert = Certificate::from_der(&der).map_err(|e| {
        FuncError::new(format!(
            "error parsing certificate: decodedSignerCert.Bytes: x509: {e}"
        ))
    })?;
    let signer = parse_private_key(&ca.key)
        .map_err(|e| FuncError::new(format!("error parsing private key: {e}")))?;
    let ca_key_id = ca_cert
        .tbs_certificate
        .extensions
        .iter()
        .flatten()
        .find(|ext| ext.extn_id == SUBJECT_KEY_IDENTIFIER)
        .and_then(|ext| SubjectKeyIdentifier::from_der(ext.extn_value.as_bytes()).ok())
        .map(|ski| ski.0);
    let issuer = (ca_cert.tbs_certificate.subject.clone(), ca_key_id);
    issue(request, false, &key, Some(issuer), &signer, rsa_sign).map(CertificatePair::into_value)
}

#[cfg(test)]
mod tests {
    use super::{CertificatePair, pem_decode};
    use crate::testing::*;
    use capstan_gotmpl::value::Value;
    use x509_cert::Certificate;
    use x509_cert::der::Decode;

    const RSA_KEY: &str = include_str!("testdata/rsa.pem");
    const EC_KEY: &str = include_str!("testdata/ec.pem");
    const ED_KEY: &str = include_str!("testdata/ed.pem");
    const CERT: &str = include_str!("testdata/cert.pem");

    fn pair(value: Value) -> CertificatePair {
        let Value::Object(object) = value else {
            panic!("not an object: {value:?}")
        };
        assert_eq!(object.type_name(), "sprig.certificate");
        let field = |name: &str| object.field(name).unwrap().as_str().unwrap().to_owned();
        CertificatePair {
            cert: field("Cert"),
            key: field("Key"),
        }
    }

    fn parse(cert: &str) -> Certificate {
        let (kind, der) = pem_decode(cert).unwrap();
        assert_eq!(kind, "CERTIFICATE");
        Certificate::from_der(&der).unwrap()
    }

    #[test]
    fn private_keys_have_gos_pem_types() {
        let ec = show("genPrivateKey", &[s("ecdsa")]);
        assert!(
            ec.starts_with("-----BEGIN EC PRIVATE KEY-----\n")
                && ec.ends_with("-----END EC PRIVATE KEY-----\n")
        );
        let ed = show("genPrivateKey", &[s("ed25519")]);
        assert!(ed.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{ed}");
        assert_eq!(show("genPrivateKey", &[s("x")]), "Unknown type x");
    }

    #[test]
    fn ca_and_signed_certificates() {
        let ca = pair(call("genCAWithKey", &[s("my-ca"), i(365), s(EC_KEY)]).unwrap());
        assert_eq!(ca.key, EC_KEY);
        let ca_cert = parse(&ca.cert);
        assert_eq!(ca_cert.tbs_certificate.subject.to_string(), "CN=my-ca");
        let ca_value = ca.clone();
        let signed = pair(
            call(
                "genSignedCertWithKey",
                &[
                    s("svc"),
                    list(&[s("10.0.0.1")]),
                    list(&[s("svc.ns.svc")]),
                    i(30),
                    Value::Object(std::rc::Rc::new(ca_value)),
                    s(RSA_KEY),
                ],
            )
            .unwrap(),
        );
        let cert = parse(&signed.cert);
        assert_eq!(cert.tbs_certificate.issuer.to_string(), "CN=my-ca");
        assert_eq!(cert.tbs_certificate.extensions.as_ref().unwrap().len(), 5);
        assert!(signed.key.starts_with("-----BEGIN RSA PRIVATE KEY-----"));
        let ed = pair(call("genCAWithKey", &[s("ed-ca"), i(1), s(ED_KEY)]).unwrap());
        assert_eq!(
            parse(&ed.cert).tbs_certificate.subject.to_string(),
            "CN=ed-ca"
        );
        let self_signed = pair(
            call(
                "genSelfSignedCertWithKey",
                &[s("me"), Value::Nil, list(&[s("a.b")]), i(1), s(EC_KEY)],
            )
            .unwrap(),
        );
        assert_eq!(
            parse(&self_signed.cert).tbs_certificate.subject.to_string(),
            "CN=me"
        );
    }

    #[test]
    fn sprig_error_texts() {
        assert_eq!(
            error(
                "genSelfSignedCertWithKey",
                &[s("me"), list(&[s("nope")]), Value::Nil, i(1), s(EC_KEY)]
            ),
            "error parsing ip: nope"
        );
        assert_eq!(
            error(
                "genSelfSignedCertWithKey",
                &[s("me"), list(&[i(1)]), Value::Nil, i(1), s(EC_KEY)]
            ),
            "error parsing ip: 1 is not a string"
        );
        assert_eq!(
            error("genCAWithKey", &[s("x"), i(1), s("junk")]),
            "parsing private key: no PEM data in input"
        );
        assert_eq!(
            error("genCAWithKey", &[s("x"), i(1), s(CERT)]),
            "parsing private key: no private key data in PEM block of type CERTIFICATE"
        );
        let built = pair(
            call(
                "buildCustomCert",
                &[
                    s(&crate::encoding::base64_encode(CERT.as_bytes())),
                    s(&crate::encoding::base64_encode(ED_KEY.as_bytes())),
                ],
            )
            .unwrap(),
        );
        assert_eq!(built.cert, CERT);
        assert_eq!(
            error("buildCustomCert", &[s("!"), s("")]),
            "unable to decode base64 certificate"
        );
    }

    /// Calls `name` with functions whose RSA keys come from `source`.
    fn call_with_source(
        source: super::RsaKeySource,
        name: &str,
        args: &[Value],
    ) -> Result<Value, String> {
        call_with(
            crate::CryptoOffload {
                rsa_keys: Some(source),
                ..Default::default()
            },
            name,
            args,
        )
    }

    fn call_with(
        offload: crate::CryptoOffload,
        name: &str,
        args: &[Value],
    ) -> Result<Value, String> {
        let funcs = crate::functions_with(offload);
        let func = funcs.get(name).expect("registered");
        (func.body)(&mut NoRuntime, args).map_err(|e| e.to_string())
    }

    #[test]
    fn certificates_are_signed_and_passwords_hashed_by_the_offload_when_given() {
        use rsa::pkcs1::DecodeRsaPrivateKey;
        use signature::Verifier;
        use std::cell::RefCell;
        use std::rc::Rc;
        use x509_cert::der::Encode;
        let (_, der) = pem_decode(RSA_KEY).expect("pem");
        let signed = Rc::new(RefCell::new(0));
        let count = signed.clone();
        let key_der = der.clone();
        let offload = crate::CryptoOffload {
            rsa_keys: Some(Rc::new(move |_| Ok(key_der.clone()))),
            rsa_sign: Some(Rc::new(move |key, message| {
                *count.borrow_mut() += 1;
                capstan_rsakey::sign_sha256_der(key, message, 1024..=4096)
            })),
            bcrypt: Some(Rc::new(|password, cost| {
                Ok(format!("offloaded {password} at {cost}"))
            })),
            bcrypt_start: None,
        };
        let ca = pair(call_with(offload.clone(), "genCA", &[s("ca"), i(10)]).unwrap());
        assert_eq!(*signed.borrow(), 1);
        // The offload's signature verifies under the CA's public key.
        let (_, cert_der) = pem_decode(&ca.cert).unwrap();
        let cert = Certificate::from_der(&cert_der).unwrap();
        let public = rsa::RsaPrivateKey::from_pkcs1_der(&der)
            .unwrap()
            .to_public_key();
        let verifying = rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(public);
        let signature = rsa::pkcs1v15::Signature::try_from(cert.signature.raw_bytes()).unwrap();
        verifying
            .verify(&cert.tbs_certificate.to_der().unwrap(), &signature)
            .expect("the certificate's signature verifies");
        assert_eq!(
            call_with(offload.clone(), "htpasswd", &[s("user"), s("pw")])
                .unwrap()
                .to_go_string(),
            "user:offloaded pw at 10"
        );
        let refusing = crate::CryptoOffload {
            rsa_sign: Some(Rc::new(|_, _| Err("host refused".into()))),
            bcrypt: Some(Rc::new(|_, _| Err("password too long".into()))),
            ..offload
        };
        assert!(
            call_with(refusing.clone(), "genCA", &[s("ca"), i(10)])
                .unwrap_err()
                .contains("host refused")
        );
        assert_eq!(
            call_with(refusing, "bcrypt", &[s("pw")])
                .unwrap()
                .to_go_string(),
            "failed to encrypt string with bcrypt: password too long"
        );
    }

    #[test]
    fn rsa_keys_come_from_the_configured_source() {
        use std::cell::RefCell;
        use std::rc::Rc;
        let (_, der) = pem_decode(RSA_KEY).expect("pem");
        let expected_pem = super::pem_encode("RSA PRIVATE KEY", &der);
        let asked = Rc::new(RefCell::new(Vec::new()));
        let log = asked.clone();
        let fixed: super::RsaKeySource = Rc::new(move |bits| {
            log.borrow_mut().push(bits);
            Ok(der.clone())
        });
        // genCA asks for 2048 bits, which the fixed 2048-bit key satisfies.
        let ca = pair(call_with_source(fixed.clone(), "genCA", &[s("ca"), i(10)]).unwrap());
        assert_eq!(ca.key, expected_pem);
        // genPrivateKey asks for 4096: a source answering with another size is an error.
        let key = call_with_source(fixed, "genPrivateKey", &[s("rsa")]).unwrap();
        assert_eq!(
            key.to_go_string(),
            "failed to generate private key: key source gave a 2048-bit key for 4096 bits"
        );
        assert_eq!(*asked.borrow(), [2048, 4096]);
        let failing: super::RsaKeySource = Rc::new(|_| Err("host refused".into()));
        assert_eq!(
            call_with_source(failing, "genCA", &[s("ca"), i(10)]).unwrap_err(),
            "error generating rsa key: host refused"
        );
    }

    #[test]
    fn unsupported_rsa_sizes_are_refused_by_name() {
        for bits in [0, 100, 511, 2049, 16386] {
            assert_eq!(
                super::generate_rsa_key_der(bits).unwrap_err(),
                format!("unsupported RSA key size {bits}")
            );
        }
    }

    /// Keys generated here have the sizes Sprig uses (2048 bits for certificates, 4096 for
    /// `genPrivateKey`), exponent 65537, and pass the `rsa` crate's validation.
    #[test]
    fn rsa_generation() {
        use rsa::pkcs1::DecodeRsaPrivateKey;
        use rsa::traits::PublicKeyParts;
        let parse = |pem: &str| {
            let (label, der) = pem_decode(pem).expect("pem");
            assert_eq!(label, "RSA PRIVATE KEY");
            let key = rsa::RsaPrivateKey::from_pkcs1_der(&der).expect("pkcs1");
            key.validate().expect("valid key");
            assert_eq!(key.e(), &rsa::BigUint::from(65537u32));
            key
        };
        let ca = pair(call("genCA", &[s("ca"), i(10)]).unwrap());
        assert_eq!(parse(&ca.key).n().bits(), 2048);
        let key = show("genPrivateKey", &[s("rsa")]);
        assert_eq!(parse(&key).n().bits(), 4096);
    }
}
