//! bcrypt hashes started before the render gets to them. A bcrypt hash at Sprig's cost
//! takes tens of milliseconds of one core whatever else happens (57 ms here, as long in
//! Helm: bitnami/argo-cd hashes its admin password with `htpasswd`), and the render waits
//! for it. When the host can hash on another core ([`CryptoOffload::bcrypt_start`]), the
//! templates that call `htpasswd` or `bcrypt` are run ahead, once the partials are parsed
//! and before the other templates are: as far as their first hash, which is started there
//! and left running, while parsing and rendering go on. The real render in Helm's order
//! then takes a started hash when it asks for the same password at the same cost, and
//! hashes as usual otherwise.
//!
//! Nothing of the run ahead is kept but the started hashes and the random bytes it drew:
//! it works on a copy of the template's values, its output and errors are dropped, and
//! it stops at the first hash or at anything that reaches outside (`lookup` against a
//! cluster, RSA keys and signatures). The template's real run is given the same random
//! bytes in the same order while it draws the same sizes ([`capstan_sprig::replay_random`]),
//! so a password made with `randAlphaNum` before the hash is the same password; whatever
//! makes the real run differ (another template changed a value it reads) only means the
//! started hash goes unused.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use capstan_gotmpl::Template;
use capstan_gotmpl::funcs::{FuncError, arg_str};
use capstan_gotmpl::value::{Map, Value};
use capstan_sprig::RandomDraws;

use super::{RenderOptions, Renderable, basename, missing_key};
use crate::funcs::{
    BCRYPT_COST, BcryptFn, BcryptStartFn, CryptoOffload, LookupFn, PendingHash, bcrypt_here,
    helm_functions,
};

/// Hashes started ahead: password, cost, the hash to wait for.
type StartedHashes = Rc<RefCell<Vec<(String, u32, PendingHash)>>>;

/// Why a run ahead stops (never shown: its errors are dropped).
const STOP: &str = "the run ahead stops here";

/// Hashes started by running templates ahead, with what the real render needs to use them.
pub(super) struct Foresight {
    /// The set the templates were run ahead in: its parses are the render's too.
    pub(super) parsed: Template,
    /// The random bytes each template run ahead drew, by template.
    pub(super) draws: HashMap<String, RandomDraws>,
    /// Started hashes: password, cost, the hash to wait for.
    started: StartedHashes,
}

impl Foresight {
    /// The render's bcrypt: a started hash of the same password at the same cost when there
    /// is one (each is used once), else `hasher` (or a hash made here).
    pub(super) fn finishing(&self, hasher: Option<BcryptFn>) -> BcryptFn {
        let started = Rc::clone(&self.started);
        Rc::new(move |password: &str, cost: u32| {
            let pending = {
                let mut started = started.borrow_mut();
                started
                    .iter()
                    .position(|(p, c, _)| p == password && *c == cost)
                    .map(|index| started.remove(index).2)
            };
            match (pending, &hasher) {
                (Some(finish), _) => finish(),
                (None, Some(hasher)) => hasher(password, cost),
                (None, None) => bcrypt_here(password, cost),
            }
        })
    }
}

/// Run ahead the templates of `order` that call `htpasswd` or `bcrypt` (in their own text;
/// partials excluded), starting their first hash with `start`. `None` when there are none,
/// or when the partials and those templates do not parse (the render reports it).
pub(super) fn start_foreseen_hashes(
    templates: &BTreeMap<String, Renderable<'_>>,
    order: &[String],
    options: &RenderOptions,
    start: BcryptStartFn,
) -> Option<Foresight> {
    let calls_bcrypt = |name: &String| {
        let text = &templates[name].text;
        !basename(name).starts_with('_') && (may_call(text, "htpasswd") || may_call(text, "bcrypt"))
    };
    let foreseen: Vec<&String> = order.iter().filter(|name| calls_bcrypt(name)).collect();
    if foreseen.is_empty() {
        return None;
    }
    let started: StartedHashes = Rc::default();
    let mut set = Template::new(stopping_functions(options, &start, &started));
    set.missing_key = missing_key(options);
    set.limits = options.limits;
    for name in order {
        if basename(name).starts_with('_') || foreseen.contains(&name) {
            set.parse(name, &templates[name].text).ok()?;
        }
    }
    let mut draws = HashMap::new();
    for name in foreseen {
        let mut data = templates[name].vals.deep_copy();
        if let Value::Map(vals) = &mut data {
            let mut template = Map::new();
            template.insert("Name".into(), Value::from(name.as_str()));
            template.insert(
                "BasePath".into(),
                Value::from(templates[name].base_path.as_str()),
            );
            vals.borrow_mut()
                .insert("Template".into(), Value::from(template));
        }
        // Ends at the first hash (or runs through); its output and errors are not wanted.
        let (_, drawn) = capstan_sprig::record_random(|| set.execute(name, data));
        draws.insert(name.clone(), drawn);
    }
    Some(Foresight {
        parsed: set,
        draws,
        started,
    })
}

/// Whether `text` may call the function `name`: the name as a word of its own, followed by
/// a space (its arguments) and not by `:` (a YAML key), not after `.` (a field), `-` or `_`
/// (part of a longer name). Only decides what is worth running ahead.
fn may_call(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        after.is_some_and(char::is_whitespace)
            && !before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '$'))
    })
}

/// Helm's functions for a run ahead: `htpasswd` and `bcrypt` start their hash and stop
/// the run; RSA keys and signatures, and `lookup` against a cluster, stop it too.
fn stopping_functions(
    options: &RenderOptions,
    start: &BcryptStartFn,
    started: &StartedHashes,
) -> capstan_gotmpl::funcs::FuncMap {
    let lookup: Option<LookupFn> = options
        .lookup
        .as_ref()
        .map(|_| Rc::new(|_: &str, _: &str, _: &str, _: &str| Err(STOP.to_owned())) as LookupFn);
    let stop = CryptoOffload {
        rsa_keys: Some(Rc::new(|_| Err(STOP.to_owned()))),
        rsa_sign: Some(Rc::new(|_, _| Err(STOP.to_owned()))),
        bcrypt: Some(Rc::new(|_, _| Err(STOP.to_owned()))),
        bcrypt_start: None,
    };
    let mut funcs = helm_functions(lookup, stop);
    let start_hash = {
        let start = Rc::clone(start);
        let started = Rc::clone(started);
        move |password: &str| -> FuncError {
            if let Ok(pending) = start(password, BCRYPT_COST) {
                started
                    .borrow_mut()
                    .push((password.to_owned(), BCRYPT_COST, pending));
            }
            FuncError(STOP.to_owned())
        }
    };
    let start_for_htpasswd = start_hash.clone();
    funcs.add("htpasswd", 2, false, move |args| {
        let (user, password) = (arg_str(args, 0)?, arg_str(args, 1)?);
        if user.contains(':') {
            return Err(FuncError(STOP.to_owned()));
        }
        Err(start_for_htpasswd(password))
    });
    funcs.add("bcrypt", 1, false, move |args| {
        Err(start_hash(arg_str(args, 0)?))
    });
    funcs
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::rc::Rc;

    use capstan_gotmpl::value::Value;

    use crate::chart::File;
    use crate::engine::{RenderOptions, render, render_values};
    use crate::funcs::{CryptoOffload, PendingHash};

    /// What the fake hasher saw: passwords started ahead, passwords hashed in place.
    #[derive(Default)]
    struct Hashes {
        started: Vec<String>,
        in_place: Vec<String>,
    }

    /// Renders `files` (name, text) of a chart `c` with a fake host: started hashes come
    /// back as `ahead(<password>)`, hashes made in place as `here(<password>)`.
    fn render_chart(files: &[(&str, &str)], start: bool) -> (String, Hashes) {
        let mut all = vec![File::new(
            "Chart.yaml",
            b"apiVersion: v2\nname: c\nversion: 1.0.0\n".to_vec(),
        )];
        all.extend(
            files
                .iter()
                .map(|(n, t)| File::new(*n, t.as_bytes().to_vec())),
        );
        let chart = crate::load::load_files(all).unwrap();
        let hashes = Rc::new(RefCell::new(Hashes::default()));
        let in_place = Rc::clone(&hashes);
        let ahead = Rc::clone(&hashes);
        let options = RenderOptions {
            crypto: CryptoOffload {
                bcrypt: Some(Rc::new(move |password: &str, _cost: u32| {
                    in_place.borrow_mut().in_place.push(password.to_owned());
                    Ok(format!("here({password})"))
                })),
                bcrypt_start: start.then(|| -> crate::funcs::BcryptStartFn {
                    Rc::new(move |password: &str, cost: u32| {
                        assert_eq!(cost, 10);
                        ahead.borrow_mut().started.push(password.to_owned());
                        let password = password.to_owned();
                        let pending: PendingHash =
                            Box::new(move || Ok(format!("ahead({password})")));
                        Ok(pending)
                    })
                }),
                ..CryptoOffload::default()
            },
            ..RenderOptions::default()
        };
        let values = crate::values::coalesce_values(&chart, &Value::new_map()).unwrap();
        let top = render_values(&chart, &values, &options);
        let rendered = render(&chart, &top, &options).unwrap();
        let text = rendered.values().cloned().collect::<Vec<_>>().join("---\n");
        let hashes = std::mem::take(&mut *hashes.borrow_mut());
        (text, hashes)
    }

    fn line<'a>(text: &'a str, key: &str) -> &'a str {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {text}"))
    }

    /// The template is run ahead as far as its hash, which is started there; its real run
    /// draws the same random password and takes the started hash: the output is the one a
    /// render without running ahead gives, with that password.
    #[test]
    fn a_foreseen_hash_is_started_ahead_and_used_with_the_same_random_password() {
        let files = [
            (
                "templates/secret.yaml",
                "{{- $p := include \"c.password\" . }}password: {{ $p }}\nentry: {{ htpasswd \"admin\" $p }}\nhash: {{ bcrypt \"fixed\" }}\n",
            ),
            (
                "templates/_helpers.tpl",
                "{{- define \"c.password\" -}}{{ randAlphaNum 12 }}{{- end -}}",
            ),
            ("templates/other.yaml", "n: {{ randAlphaNum 5 }}\n"),
        ];
        let (text, hashes) = render_chart(&files, true);
        let password = line(&text, "password: ");
        assert_eq!(password.len(), 12, "{text}");
        assert_eq!(line(&text, "entry: "), format!("admin:ahead({password})"));
        // The run ahead stops at its first hash: the second is made in place.
        assert_eq!(line(&text, "hash: "), "here(fixed)");
        assert_eq!(hashes.started, [password]);
        assert_eq!(hashes.in_place, ["fixed"]);
        // Without a host that starts hashes, nothing runs ahead.
        let (text, hashes) = render_chart(&files, false);
        let password = line(&text, "password: ");
        assert_eq!(line(&text, "entry: "), format!("admin:here({password})"));
        assert!(hashes.started.is_empty());
    }

    /// A template rendered earlier in Helm's order changes what the hashed template reads:
    /// the run ahead (on the values as they were) started a hash of another password, which
    /// goes unused, and the real run hashes its own in place. Its random part is the same
    /// (replayed), the changed part is the real run's.
    #[test]
    fn a_hash_foreseen_wrongly_goes_unused() {
        let files = [
            // Helm renders z.yaml before b.yaml (reverse lexicographic order).
            (
                "templates/z.yaml",
                "{{- $_ := set .Values \"salt\" \"changed\" }}z: 1\n",
            ),
            (
                "templates/b.yaml",
                "{{- $p := printf \"%s-%s\" (.Values.salt | default \"first\") (randAlphaNum 6) }}entry: {{ htpasswd \"u\" $p }}\n",
            ),
        ];
        let (text, hashes) = render_chart(&files, true);
        let entry = line(&text, "entry: ");
        let hashed = entry
            .strip_prefix("u:here(changed-")
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(hashes.started, [format!("first-{hashed}")]);
        assert_eq!(hashes.in_place, [format!("changed-{hashed}")]);
    }

    /// Only a text that calls `htpasswd` or `bcrypt` is run ahead, not one that names them
    /// otherwise (Bitnami harbor's `htpasswd:` keys, `.Values.….htpasswd`, `registry-htpasswd`).
    #[test]
    fn only_calls_are_foreseen() {
        use super::may_call;
        assert!(may_call(
            "{{ (split \":\" (htpasswd \"\" $p))._1 }}",
            "htpasswd"
        ));
        assert!(may_call("{{- bcrypt .Values.p }}", "bcrypt"));
        assert!(may_call("{{ .Values.p | htpasswd\n\"u\" }}", "htpasswd"));
        for text in [
            "      htpasswd:\n",
            "{{ .Values.registry.credentials.htpasswd | b64enc }}",
            "- name: registry-htpasswd\n",
            "{{ $htpasswd := 1 }}",
            "htpasswd_file: x",
        ] {
            assert!(!may_call(text, "htpasswd"), "{text}");
        }
    }

    /// A run ahead that fails (here: before another template has set what it needs) starts
    /// nothing and changes nothing: the real run goes through and hashes in place. One
    /// that gets no RSA key goes on to its hash.
    #[test]
    fn a_run_ahead_that_fails_leaves_the_render_alone() {
        let files = [
            (
                "templates/z.yaml",
                "{{- $_ := set .Values \"ready\" true }}z: 1\n",
            ),
            (
                "templates/s.yaml",
                "{{- if not .Values.ready }}{{ fail \"not ready\" }}{{ end }}entry: {{ htpasswd \"u\" \"pw\" }}\n",
            ),
            (
                "templates/k.yaml",
                "{{- $key := genPrivateKey \"rsa\" }}entry: {{ htpasswd \"k\" \"other\" }}\n",
            ),
        ];
        let (text, hashes) = render_chart(&files, true);
        assert!(text.contains("entry: u:here(pw)\n"), "{text}");
        assert!(text.contains("entry: k:ahead(other)\n"), "{text}");
        assert_eq!(hashes.started, ["other"]);
        assert_eq!(hashes.in_place, ["pw"]);
    }

    #[allow(dead_code)]
    mod xorshift {
        include!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../test-support/xorshift.rs"
        ));
    }
    use xorshift::Rng;

    /// A random source for [`capstan_sprig::with_random_source`] from `seed`.
    fn seeded(seed: u64) -> impl FnMut(&mut [u8]) + 'static {
        let mut rng = Rng(seed | 1);
        move |buffer: &mut [u8]| {
            for byte in buffer.iter_mut() {
                *byte = rng.next() as u8;
            }
        }
    }

    /// A random function call of Sprig's, with a size.
    fn random_call(rng: &mut Rng) -> String {
        let n = rng.below(16);
        match rng.below(6) {
            0 => format!("randAlphaNum {}", n + 1),
            1 => format!("randAlpha {}", n + 1),
            2 => format!("randNumeric {}", n + 1),
            3 => format!("randAscii {}", n + 1),
            4 => format!("randBytes {}", n % 9),
            _ => "uuidv4".to_owned(),
        }
    }

    /// A generated chart: partials that draw random passwords (one hashing itself), and a
    /// few templates (one of them in a subchart now and then) whose lines draw random
    /// strings, hash random and fixed passwords with `htpasswd` and `bcrypt` (directly,
    /// through `include`, `tpl` or a pipe), change the values later templates read, fail
    /// on a value an earlier template set, call `lookup`, or redefine a partial.
    fn generated_chart(rng: &mut Rng) -> Vec<(String, String)> {
        let mut files = vec![(
            "Chart.yaml".to_owned(),
            "apiVersion: v2\nname: c\nversion: 1.0.0\n".to_owned(),
        )];
        if rng.chance(50) {
            files.push(("values.yaml".to_owned(), "salt: base\n".to_owned()));
        }
        let helpers = format!(
            "{{{{- define \"c.pw\" -}}}}{{{{ {} }}}}{{{{- end -}}}}\n{{{{- define \"c.salted\" -}}}}{{{{ printf \"%s-%s\" (.Values.salt | default \"first\") ({}) }}}}{{{{- end -}}}}\n{{{{- define \"c.hash\" -}}}}{{{{ htpasswd \"inner\" ({}) }}}}{{{{- end -}}}}\n",
            random_call(rng),
            random_call(rng),
            random_call(rng),
        );
        files.push(("templates/_helpers.tpl".to_owned(), helpers));
        let subchart = rng.chance(25);
        if subchart {
            files.push((
                "charts/sub/Chart.yaml".to_owned(),
                "apiVersion: v2\nname: sub\nversion: 0.1.0\n".to_owned(),
            ));
        }
        let mut names: Vec<String> = Vec::new();
        for _ in 0..1 + rng.below(5) {
            let name = if subchart && rng.chance(30) {
                format!("charts/sub/templates/{}.yaml", rng.pick(&["s", "t"]))
            } else {
                format!(
                    "templates/{}.yaml",
                    rng.pick(&["a", "b", "m", "x", "y", "z"])
                )
            };
            if names.contains(&name) {
                continue;
            }
            names.push(name.clone());
            let mut text = String::new();
            for k in 0..1 + rng.below(6) {
                let line = match rng.below(24) {
                    0..=2 => format!("k{k}: {{{{ {} }}}}", random_call(rng)),
                    3..=4 => format!(
                        "{{{{- $p{k} := include \"c.pw\" . }}}}\np{k}: {{{{ $p{k} }}}}\nk{k}: {{{{ htpasswd \"admin\" $p{k} }}}}"
                    ),
                    5 | 22 => format!("k{k}: {{{{ bcrypt (include \"c.salted\" .) }}}}"),
                    6 => format!("k{k}: {{{{ htpasswd \"u\" \"fixed\" }}}}"),
                    7 => format!("k{k}: {{{{ bcrypt \"fixed\" }}}}"),
                    8 => format!("k{k}: {{{{ htpasswd \"bad:user\" \"pw\" }}}}"),
                    9 | 23 => format!("{{{{- $_ := set .Values \"salt\" \"changed{k}\" }}}}"),
                    10 => "{{- $_ := set .Values \"ready\" true }}".to_owned(),
                    11 => format!(
                        "{{{{- if .Values.ready }}}}k{k}: {{{{ htpasswd \"r\" ({}) }}}}{{{{ else }}}}k{k}: not ready{{{{ end }}}}",
                        random_call(rng)
                    ),
                    12 => format!("k{k}: {{{{ include \"c.hash\" . }}}}"),
                    13 => format!(
                        "k{k}: {{{{ tpl \"{{{{ htpasswd \\\"t\\\" (.Values.salt | default \\\"s\\\") }}}}\" . }}}}"
                    ),
                    14 => format!("k{k}: {{{{ {} | htpasswd \"piped\" }}}}", random_call(rng)),
                    15 => format!("k{k}: {{{{ encryptAES \"key\" \"text\" | len }}}}"),
                    16 => format!(
                        "k{k}: {{{{ lookup \"v1\" \"Secret\" \"ns\" \"name\" | toJson }}}}\nh{k}: {{{{ htpasswd \"l\" (randAlpha 4) }}}}"
                    ),
                    17 => format!(
                        "k{k}: {{{{ .Values.counter | default 0 }}}}{{{{ $_ := set .Values \"counter\" (add1 (.Values.counter | default 0)) }}}}"
                    ),
                    18 if rng.chance(40) => "{{- $_ := set .Values \"boom\" true }}".to_owned(),
                    19 => format!(
                        "{{{{- if .Values.boom }}}}{{{{ fail \"boom\" }}}}{{{{ end }}}}k{k}: {{{{ bcrypt (randAlphaNum 8) }}}}"
                    ),
                    20 if rng.chance(30) => format!(
                        "{{{{- define \"c.pw\" -}}}}{{{{ {} }}}}{{{{- end -}}}}",
                        random_call(rng)
                    ),
                    _ => format!(
                        "k{k}: {{{{ .Values.salt }}}}-{{{{ htpasswd \"s\" (.Values.salt | default \"none\") }}}}"
                    ),
                };
                text.push_str(&line);
                text.push('\n');
            }
            files.push((name, text));
        }
        files
    }

    /// What a render with a fake host saw.
    #[derive(Default)]
    struct Seen {
        /// Hashes started ahead, and of those the ones the render finished.
        started: usize,
        finished: usize,
        /// Hashes made in place.
        in_place: usize,
    }

    /// Renders `files` with a fake host whose bcrypt hash is a function of the password and
    /// cost (the same whether started ahead or made in place; real hashes carry a random
    /// salt of the `bcrypt` crate's own, outside Sprig's random source, so two renders
    /// could not be compared byte for byte with them), starting hashes ahead when `start`
    /// (refusing after `start_limit`, as the host does past its limit per call).
    fn render_generated(
        files: &[(String, String)],
        start: bool,
        start_limit: usize,
    ) -> (
        Result<BTreeMap<String, String>, crate::engine::RenderError>,
        Seen,
    ) {
        let chart = crate::load::load_files(
            files
                .iter()
                .map(|(name, text)| File::new(name.as_str(), text.as_bytes().to_vec()))
                .collect(),
        )
        .unwrap();
        let seen = Rc::new(RefCell::new(Seen::default()));
        let fake = |password: &str, cost: u32| format!("$fake${cost}${password}");
        let in_place = Rc::clone(&seen);
        let ahead = Rc::clone(&seen);
        let lookup: crate::funcs::LookupFn = Rc::new(|_: &str, kind: &str, _: &str, name: &str| {
            Ok(crate::test_support::map(&[(kind, Value::from(name))]))
        });
        let options = RenderOptions {
            crypto: CryptoOffload {
                bcrypt: Some(Rc::new(move |password: &str, cost: u32| {
                    in_place.borrow_mut().in_place += 1;
                    Ok(fake(password, cost))
                })),
                bcrypt_start: start.then(|| -> crate::funcs::BcryptStartFn {
                    Rc::new(move |password: &str, cost: u32| {
                        if ahead.borrow().started >= start_limit {
                            return Err("too many hashes started".to_owned());
                        }
                        ahead.borrow_mut().started += 1;
                        let hash = fake(password, cost);
                        let finished = Rc::clone(&ahead);
                        let pending: PendingHash = Box::new(move || {
                            finished.borrow_mut().finished += 1;
                            Ok(hash)
                        });
                        Ok(pending)
                    })
                }),
                ..CryptoOffload::default()
            },
            lookup: Some(lookup),
            ..RenderOptions::default()
        };
        let values = crate::values::coalesce_values(&chart, &Value::new_map()).unwrap();
        let top = render_values(&chart, &values, &options);
        let rendered = render(&chart, &top, &options);
        drop(options);
        let seen = std::mem::take(&mut *seen.borrow_mut());
        (rendered, seen)
    }

    /// Generated charts render to the same output (or error) with hashes started ahead as
    /// without, given the same random bytes: the render with the run ahead draws from a
    /// seeded source (its runs ahead record their draws, its real runs replay them), and
    /// the render without is handed exactly the draws the first render's templates were
    /// handed, in order; it must ask for the same draws and print the same bytes. The fake
    /// host's hash is a function of the password, so a started hash taken for another
    /// password, or a random password that differs between the run ahead and the real
    /// run where the output uses the started hash, shows in the output.
    #[test]
    fn generated_charts_render_alike_with_and_without_hashes_started_ahead() {
        const CHARTS: usize = 3000;
        let mut rng = Rng(0xa11e_ad0f_0043_b0a7);
        let (mut foreseen, mut started, mut finished, mut failed) = (0, 0, 0, 0);
        for index in 0..CHARTS {
            let files = generated_chart(&mut rng);
            let seed = rng.next();
            let start_limit = rng.pick(&[usize::MAX, 4, 1, 0]);
            let ((with_ahead, seen), handed_out) =
                capstan_sprig::with_random_source(seeded(seed), || {
                    render_generated(&files, true, start_limit)
                });
            let ((without, plain), handed_again) =
                capstan_sprig::with_random_source(seeded(!seed), || {
                    capstan_sprig::replay_random(
                        capstan_sprig::RandomDraws::from_draws(handed_out.clone()),
                        || render_generated(&files, false, 0),
                    )
                });
            let show = || {
                files
                    .iter()
                    .map(|(name, text)| format!("--- {name}\n{text}"))
                    .collect::<String>()
            };
            assert_eq!(
                with_ahead,
                without,
                "chart {index} (seed {seed:#x}) renders otherwise with hashes started ahead (left) than without (right):\n{}",
                show()
            );
            assert_eq!(
                handed_again,
                handed_out,
                "chart {index} (seed {seed:#x}): the render without hashes started ahead drew otherwise:\n{}",
                show()
            );
            assert_eq!(plain.started, 0);
            foreseen += usize::from(seen.started > 0 || start_limit == 0);
            started += seen.started;
            finished += seen.finished;
            failed += usize::from(with_ahead.is_err());
        }
        eprintln!(
            "{CHARTS} generated charts rendered alike with and without hashes started ahead: {foreseen} ran templates ahead, {started} hashes started, {finished} of them used, {failed} renders failed alike"
        );
        // The generator reaches every case: hashes used, hashes left unused, failures.
        assert!(foreseen >= CHARTS / 2, "{foreseen}");
        assert!(finished >= CHARTS / 4, "{finished}");
        assert!(started >= finished + CHARTS / 20, "{started} {finished}");
        assert!((CHARTS / 50..=CHARTS / 4).contains(&failed), "{failed}");
    }
}
