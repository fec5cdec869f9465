//! Sprig v3.3 (the function library Helm gives templates), written in Rust against
//! [`capstan_gotmpl`]'s value model, with Sprig's semantics and error texts.
//!
//! Each module registers one family of functions; [`functions`] puts them together. A Go
//! panic inside a Sprig function surfaces in templates as `error calling NAME: PANIC`, so the
//! panicking (non-`must`) variants return the same [`FuncError`] text as their `must` twins.
//!
//! [`FuncError`]: capstan_gotmpl::funcs::FuncError

use capstan_gotmpl::funcs::FuncMap;

mod certs;
mod conv;
mod crypto;
mod dates;
mod decimal;
mod defaults;
mod dicts;
mod encoding;
mod lists;
mod math;
pub mod paths;
mod reflect;
mod regex;
#[doc(hidden)]
pub use regex::engines_disagree as regex_engines_disagree;
pub mod semver;
mod strings;
mod url;
mod values;

pub use certs::{RsaKeySource, RsaSignFn, generate_rsa_key_der};
#[doc(hidden)]
pub use crypto::with_random_source;
pub use crypto::{
    BCRYPT_COST, BcryptFn, BcryptStartFn, PendingHash, RandomDraws, bcrypt_here, record_random,
    replay_random,
};

/// The costly cryptography of Sprig's functions that a caller can have done elsewhere: a
/// WebAssembly component hands it to its native host (the `crypto` interface), where it is
/// several times faster. Each `None` is done here, in-process.
#[derive(Clone, Default)]
pub struct CryptoOffload {
    /// New RSA keys (`genPrivateKey`, `genCA`, `genSelfSignedCert`, `genSignedCert`).
    pub rsa_keys: Option<RsaKeySource>,
    /// RSA signatures of certificates.
    pub rsa_sign: Option<RsaSignFn>,
    /// bcrypt hashes (`bcrypt`, `htpasswd`).
    pub bcrypt: Option<BcryptFn>,
    /// bcrypt hashes started and left running (a host that hashes on another core); with
    /// it a render starts the hashes it can foresee before it gets to them.
    pub bcrypt_start: Option<BcryptStartFn>,
}

/// Every Sprig function Helm exposes (`TxtFuncMap` without `env` and `expandenv`).
pub fn functions() -> FuncMap {
    functions_with(CryptoOffload::default())
}

/// [`functions`] with the cryptography `offload` names done there.
pub fn functions_with(offload: CryptoOffload) -> FuncMap {
    let mut funcs = FuncMap::new();
    certs::register(&mut funcs, offload.rsa_keys, offload.rsa_sign);
    conv::register(&mut funcs);
    crypto::register(&mut funcs, offload.bcrypt);
    dates::register(&mut funcs);
    defaults::register(&mut funcs);
    dicts::register(&mut funcs);
    encoding::register(&mut funcs);
    lists::register(&mut funcs);
    math::register(&mut funcs);
    paths::register(&mut funcs);
    reflect::register(&mut funcs);
    regex::register(&mut funcs);
    semver::register(&mut funcs);
    strings::register(&mut funcs);
    url::register(&mut funcs);
    funcs
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    /// Every key of Sprig v3.3.0's `genericMap` (functions.go) except `env` and `expandenv`.
    const SPRIG_FUNCTIONS: &[&str] = &[
        "abbrev",
        "abbrevboth",
        "add",
        "add1",
        "add1f",
        "addf",
        "adler32sum",
        "ago",
        "all",
        "any",
        "append",
        "atoi",
        "b32dec",
        "b32enc",
        "b64dec",
        "b64enc",
        "base",
        "bcrypt",
        "biggest",
        "buildCustomCert",
        "camelcase",
        "cat",
        "ceil",
        "chunk",
        "clean",
        "coalesce",
        "compact",
        "concat",
        "contains",
        "date",
        "dateInZone",
        "dateModify",
        "date_in_zone",
        "date_modify",
        "decryptAES",
        "deepCopy",
        "deepEqual",
        "default",
        "derivePassword",
        "dict",
        "dig",
        "dir",
        "div",
        "divf",
        "duration",
        "durationRound",
        "empty",
        "encryptAES",
        "ext",
        "fail",
        "first",
        "float64",
        "floor",
        "fromJson",
        "genCA",
        "genCAWithKey",
        "genPrivateKey",
        "genSelfSignedCert",
        "genSelfSignedCertWithKey",
        "genSignedCert",
        "genSignedCertWithKey",
        "get",
        "getHostByName",
        "has",
        "hasKey",
        "hasPrefix",
        "hasSuffix",
        "hello",
        "htmlDate",
        "htmlDateInZone",
        "htpasswd",
        "indent",
        "initial",
        "initials",
        "int",
        "int64",
        "isAbs",
        "join",
        "kebabcase",
        "keys",
        "kindIs",
        "kindOf",
        "last",
        "list",
        "lower",
        "max",
        "maxf",
        "merge",
        "mergeOverwrite",
        "min",
        "minf",
        "mod",
        "mul",
        "mulf",
        "mustAppend",
        "mustChunk",
        "mustCompact",
        "mustDateModify",
        "mustDeepCopy",
        "mustFirst",
        "mustFromJson",
        "mustHas",
        "mustInitial",
        "mustLast",
        "mustMerge",
        "mustMergeOverwrite",
        "mustPrepend",
        "mustPush",
        "mustRegexFind",
        "mustRegexFindAll",
        "mustRegexMatch",
        "mustRegexReplaceAll",
        "mustRegexReplaceAllLiteral",
        "mustRegexSplit",
        "mustRest",
        "mustReverse",
        "mustSlice",
        "mustToDate",
        "mustToJson",
        "mustToPrettyJson",
        "mustToRawJson",
        "mustUniq",
        "mustWithout",
        "must_date_modify",
        "nindent",
        "nospace",
        "now",
        "omit",
        "osBase",
        "osClean",
        "osDir",
        "osExt",
        "osIsAbs",
        "pick",
        "pluck",
        "plural",
        "prepend",
        "push",
        "quote",
        "randAlpha",
        "randAlphaNum",
        "randAscii",
        "randBytes",
        "randInt",
        "randNumeric",
        "regexFind",
        "regexFindAll",
        "regexMatch",
        "regexQuoteMeta",
        "regexReplaceAll",
        "regexReplaceAllLiteral",
        "regexSplit",
        "repeat",
        "replace",
        "rest",
        "reverse",
        "round",
        "semver",
        "semverCompare",
        "seq",
        "set",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "shuffle",
        "slice",
        "snakecase",
        "sortAlpha",
        "split",
        "splitList",
        "splitn",
        "squote",
        "sub",
        "subf",
        "substr",
        "swapcase",
        "ternary",
        "title",
        "toDate",
        "toDecimal",
        "toJson",
        "toPrettyJson",
        "toRawJson",
        "toString",
        "toStrings",
        "trim",
        "trimAll",
        "trimPrefix",
        "trimSuffix",
        "trimall",
        "trunc",
        "tuple",
        "typeIs",
        "typeIsLike",
        "typeOf",
        "uniq",
        "unixEpoch",
        "unset",
        "until",
        "untilStep",
        "untitle",
        "upper",
        "urlJoin",
        "urlParse",
        "uuidv4",
        "values",
        "without",
        "wrap",
        "wrapWith",
    ];

    #[test]
    fn registers_all_of_sprigs_functions_but_env() {
        let funcs = super::functions();
        assert_eq!(SPRIG_FUNCTIONS.len(), 209);
        for name in SPRIG_FUNCTIONS {
            assert!(funcs.contains(name), "{name} is missing");
        }
        assert!(!funcs.contains("env") && !funcs.contains("expandenv"));
    }

    /// Pipelines ending in `toJson`, with Helm's outputs from shared/helm-parity/snippets.yaml.
    #[test]
    fn snippets_through_to_json() {
        use crate::testing::*;
        use capstan_gotmpl::value::Value;
        let json = |value: Value| show("toJson", &[value]);
        let values_map = || map(&[("a", f(1.0)), ("b", f(2.0)), ("c", f(3.0))]);
        let nested = || map(&[("x", map(&[("true", map(&[("z", s("deep"))]))]))]);
        assert_eq!(
            json(call("semver", &[s("1.2.3-beta.1+b")]).unwrap()),
            "\"1.2.3-beta.1+b\""
        );
        assert_eq!(
            json(call("urlParse", &[s("https://u:p@h:8/p?q=1#f")]).unwrap()),
            r#"{"fragment":"f","host":"h:8","hostname":"h","opaque":"","path":"/p","query":"q=1","scheme":"https","userinfo":"u:p"}"#
        );
        assert_eq!(
            json(call("dict", &[s("a"), i(1), s("b"), s("x")]).unwrap()),
            r#"{"a":1,"b":"x"}"#
        );
        let plucked = call("pluck", &[s("a"), map(&[("a", i(1))]), map(&[("a", i(2))])]).unwrap();
        assert_eq!(json(plucked), "[1,2]");
        assert_eq!(json(call("values", &[map(&[("a", i(1))])]).unwrap()), "[1]");
        assert_eq!(
            json(call("pick", &[values_map(), s("a"), s("b")]).unwrap()),
            r#"{"a":1,"b":2}"#
        );
        assert_eq!(
            json(call("omit", &[values_map(), s("a")]).unwrap()),
            r#"{"b":2,"c":3}"#
        );
        let merged = call(
            "merge",
            &[map(&[("a", i(1))]), map(&[("a", i(2)), ("b", i(3))])],
        )
        .unwrap();
        assert_eq!(json(merged), r#"{"a":1,"b":3}"#);
        let over = call(
            "mergeOverwrite",
            &[map(&[("a", i(1))]), map(&[("a", i(2)), ("b", i(3))])],
        )
        .unwrap();
        assert_eq!(json(over), r#"{"a":2,"b":3}"#);
        assert_eq!(
            json(call("deepCopy", &[nested()]).unwrap()),
            r#"{"x":{"true":{"z":"deep"}}}"#
        );
        assert_eq!(json(call("mustFirst", &[list(&[])]).unwrap()), "null");
        assert_eq!(
            json(call("list", &[i(1), s("a"), f(2.5)]).unwrap()),
            r#"[1,"a",2.5]"#
        );
        assert_eq!(show("quote", &[s("a"), i(1), Value::Nil]), r#""a" "1""#);
        assert_eq!(show("quote", &[s("a\tb\"")]), r#""a\tb\"""#);
    }
}
