//! A seeded, grammar-based generator of Go regular expressions and texts to try them on:
//! every construct of Go's RE2 syntax (literals and every kind of escape, classes with
//! Perl, Unicode and POSIX groups beside `-`, `]` first, `[^]`, flag groups, named groups,
//! counted repetitions up to and past Go's 1000, empty alternatives) and the malformed
//! patterns Go refuses. Each pattern is built with a text it should match (its witness);
//! the cases try the witness, a mutation of it and a random text.

// The seeded source (xorshift64*, shared by the generated-input tests of every crate): the
// same seed gives the same cases on every machine, so recorded answers can be recorded
// again.
#[allow(dead_code)]
mod xorshift {
    include!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../test-support/xorshift.rs"
    ));
}
use xorshift::Rng;

/// How often, in a thousand picks, a construct Go refuses is picked over a valid one: often
/// enough that every refusal is met thousands of times, rarely enough that most patterns
/// compile and are matched.
const REFUSED_PER_MILLE: u64 = 25;

/// One case: a pattern, a text, the count for `regexFindAll`/`regexSplit` and a
/// replacement template.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Case {
    pub p: String,
    pub s: String,
    pub n: i64,
    pub r: String,
}

/// Characters texts and literals are drawn from: ASCII letters (with the case-folding
/// specials `k`, `s`), digits, punctuation, white space, Latin-1, Greek with its three
/// sigmas, Cyrillic, the Kelvin sign and long s (which fold to ASCII), CJK, an emoji,
/// titlecase and dotted letters.
const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'k', 's', 'x', 'y', 'z', 'A', 'B', 'K', 'S', 'X', 'Z', '0', '1', '5', '9', '_',
    '-', '.', ' ', '\n', '\t', '/', ':', '@', '{', '}', '$', 'é', 'É', 'ñ', 'ß', 'µ', 'σ', 'Σ',
    'ς', 'α', 'Ω', 'Д', 'ж', '\u{212A}', '\u{17F}', '中', '文', '😀', 'ǅ', 'İ', 'ı', '\u{85}',
    '\u{A0}', '٣',
];

/// Group names: valid ones (Go allows a leading digit) reused so that duplicates occur.
const NAMES: &[&str] = &["a", "x1", "1x", "n", "_", "name", "a"];

/// Replacement templates: numbered and named groups, braces, `$$`, malformed `$`.
const TEMPLATES: &[&str] = &[
    "",
    "x",
    "$1",
    "${1}",
    "$0",
    "<$0>",
    "$$",
    "$a",
    "${a}x",
    "$1x",
    "${1}x",
    "$01",
    "$x1",
    "${1x}",
    "$name",
    "$é",
    "$",
    "${",
    "${}",
    "$2$1",
    "[$n]",
    "$_",
    "${a",
    "$100000000",
];

/// The longest pattern generated, in characters.
const MAX_PATTERN_CHARS: usize = 48;

const COUNTS: &[i64] = &[-1, -1, -1, 0, 1, 2, 3];

/// Generates cases from a seed.
pub struct Generator {
    rng: Rng,
    depth: usize,
}

impl Generator {
    pub fn new(seed: u64) -> Generator {
        Generator {
            rng: Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            depth: 0,
        }
    }

    /// The cases of the next pattern: its witness, a mutation, sometimes a random text.
    pub fn cases(&mut self) -> Vec<Case> {
        let (pattern, witness) = self.pattern();
        let mut texts = vec![witness.clone(), self.mutate(&witness)];
        if self.rng.chance(30) {
            texts.push(self.random_text());
        }
        if self.rng.chance(20) {
            texts.push(format!(
                "{}{}{}",
                self.random_text(),
                witness,
                self.random_text()
            ));
        }
        texts
            .into_iter()
            .map(|s| Case {
                p: pattern.clone(),
                s,
                n: self.rng.pick(COUNTS),
                r: self.rng.pick(TEMPLATES).to_string(),
            })
            .collect()
    }

    /// A valid item, or now and then one Go refuses.
    fn either<T: Copy>(&mut self, valid: &[T], refused: &[T]) -> T {
        if self.rng.next() % 1000 < REFUSED_PER_MILLE {
            self.rng.pick(refused)
        } else {
            self.rng.pick(valid)
        }
    }

    fn random_text(&mut self) -> String {
        let len = self.rng.below(8);
        (0..len).map(|_| self.rng.pick(ALPHABET)).collect()
    }

    fn mutate(&mut self, text: &str) -> String {
        let mut chars: Vec<char> = text.chars().collect();
        match self.rng.below(4) {
            0 if !chars.is_empty() => {
                let at = self.rng.below(chars.len());
                chars.remove(at);
            }
            1 => {
                let at = self.rng.below(chars.len() + 1);
                chars.insert(at, self.rng.pick(ALPHABET));
            }
            2 if !chars.is_empty() => {
                let at = self.rng.below(chars.len());
                chars[at] = self.rng.pick(ALPHABET);
            }
            _ => {
                let copy = chars.clone();
                chars.extend(copy);
            }
        }
        chars.into_iter().collect()
    }

    /// A whole pattern and its witness; one in twenty is malformed on purpose.
    pub fn pattern(&mut self) -> (String, String) {
        // Short patterns: long ones add nothing a combination of short ones does not, and
        // cost time and recorded bytes.
        loop {
            let (pattern, witness) = self.any_pattern();
            if pattern.chars().count() <= MAX_PATTERN_CHARS {
                return (pattern, witness);
            }
        }
    }

    fn any_pattern(&mut self) -> (String, String) {
        self.depth = 0;
        let (mut pattern, mut witness) = self.alternation();
        if self.rng.chance(15) {
            pattern.insert(0, '^');
        }
        if self.rng.chance(15) {
            pattern.push('$');
        }
        if self.rng.chance(2) {
            let (p, w) = self.malformed();
            let at = self.char_boundary(&pattern);
            pattern.insert_str(at, &p);
            witness.push_str(&w);
        }
        (pattern, witness)
    }

    fn char_boundary(&mut self, s: &str) -> usize {
        let bounds: Vec<usize> = (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect();
        self.rng.pick(&bounds)
    }

    fn alternation(&mut self) -> (String, String) {
        let branches = if self.rng.chance(25) {
            1 + self.rng.below(3)
        } else {
            1
        };
        let mut pattern = String::new();
        let mut witness = None;
        for i in 0..branches {
            if i > 0 {
                pattern.push('|');
            }
            // Empty alternatives: `a|`, `|b`, `a||b`.
            let (p, w) = if branches > 1 && self.rng.chance(10) {
                (String::new(), String::new())
            } else {
                self.concat()
            };
            pattern.push_str(&p);
            if witness.is_none() || self.rng.chance(30) {
                witness = Some(w);
            }
        }
        (pattern, witness.unwrap_or_default())
    }

    fn concat(&mut self) -> (String, String) {
        let pieces = 1 + self.rng.below(if self.depth > 2 { 2 } else { 5 });
        let mut pattern = String::new();
        let mut witness = String::new();
        for _ in 0..pieces {
            let (p, w) = self.piece();
            pattern.push_str(&p);
            witness.push_str(&w);
        }
        (pattern, witness)
    }

    fn piece(&mut self) -> (String, String) {
        let (atom, witness) = self.atom();
        if !self.rng.chance(35) || atom.is_empty() {
            return (atom, witness);
        }
        // Counts past Go's limits and stacked operators (branches 9 and 11) a quarter as
        // often as the others.
        let mut branch = self.rng.below(12);
        if (branch == 9 || branch == 11) && !self.rng.chance(25) {
            branch = self.rng.below(9);
        }
        let (operator, times) = match branch {
            0 | 1 => ("*".to_string(), self.rng.below(3)),
            2 | 3 => ("+".to_string(), 1 + self.rng.below(2)),
            4 | 5 => ("?".to_string(), self.rng.below(2)),
            6 => {
                let n = self.rng.below(4);
                (format!("{{{n}}}"), n)
            }
            7 => {
                let n = self.rng.below(3);
                (format!("{{{n},}}"), n + self.rng.below(2))
            }
            8 => {
                let (lo, hi) = (self.rng.below(3), self.rng.below(4));
                (format!("{{{lo},{}}}", lo.max(hi)), lo)
            }
            9 => {
                // Go's limits: 1000 is the largest count; nested counts multiply.
                let n = self
                    .rng
                    .pick(&[999, 1000, 1001, 500, 2000, 100_000_000, 99_999_999]);
                (format!("{{{n}}}"), 0)
            }
            10 => {
                // Braces that start no repetition are literals.
                let text = self
                    .rng
                    .pick(&["{", "{,3}", "{01}", "{1,02}", "{x}", "{2", "{2,"]);
                (text.to_string(), 0)
            }
            _ => {
                // Stacked operators, which Go refuses.
                let text = self.rng.pick(&["**", "+*", "*?+", "{2}{3}", "??", "+?*"]);
                (text.to_string(), 1)
            }
        };
        let lazy = if self.rng.chance(20) { "?" } else { "" };
        let repeated = witness.repeat(times.min(3));
        (format!("{atom}{operator}{lazy}"), repeated)
    }

    fn atom(&mut self) -> (String, String) {
        let group_allowed = self.depth < 4;
        match self.rng.below(if group_allowed { 20 } else { 14 }) {
            0..=4 => self.literal(),
            5 => self.escape(),
            6 => self.perl_class(),
            7 => self.unicode_class(),
            8 | 9 => self.class(),
            10 => (".".into(), (self.rng.pick(&["a", "\n", "é", " "])).into()),
            11 => {
                let anchor = self.rng.pick(&["^", "$", "\\A", "\\z", "\\b", "\\B"]);
                (anchor.into(), String::new())
            }
            12 => {
                let text: String = (0..self.rng.below(4))
                    .map(|_| self.rng.pick(ALPHABET))
                    .collect();
                let end = if self.rng.chance(80) { "\\E" } else { "" };
                (format!("\\Q{text}{end}"), text)
            }
            13 => {
                let flags = self.rng.pick(&[
                    "(?i)", "(?s)", "(?m)", "(?U)", "(?-i)", "(?i-s)", "(?)", "(?ims)",
                ]);
                (flags.into(), String::new())
            }
            _ => self.group(),
        }
    }

    fn literal(&mut self) -> (String, String) {
        let c = self.rng.pick(ALPHABET);
        let text = if "\\.+*?()|[]{}^$".contains(c) {
            format!("\\{c}")
        } else {
            c.to_string()
        };
        (text, c.to_string())
    }

    fn escape(&mut self) -> (String, String) {
        let escapes: &[(&str, &str)] = &[
            ("\\.", "."),
            ("\\-", "-"),
            ("\\_", "_"),
            ("\\ ", " "),
            ("\\/", "/"),
            ("\\#", "#"),
            ("\\\\", "\\"),
            ("\\*", "*"),
            ("\\!", "!"),
            ("\\~", "~"),
            ("\\<", "<"),
            ("\\t", "\t"),
            ("\\n", "\n"),
            ("\\r", "\r"),
            ("\\f", "\u{c}"),
            ("\\v", "\u{b}"),
            ("\\a", "\u{7}"),
            ("\\0", "\0"),
            ("\\01", "\u{1}"),
            ("\\141", "a"),
            ("\\377", "ÿ"),
            ("\\0101", "A1"),
            ("\\x41", "A"),
            ("\\x7a", "z"),
            ("\\x{263A}", "☺"),
            ("\\x{10FFFF}", "\u{10FFFF}"),
            ("\\x{0}", "\0"),
            ("\\x{000041}", "A"),
        ];
        // Refused by Go (or, for POSIX, no class at all): picked now and then.
        let refused: &[(&str, &str)] = &[
            ("\\1", ""),
            ("\\8", ""),
            ("\\x{110000}", ""),
            ("\\x{}", ""),
            ("\\xZ1", ""),
            ("\\x4", ""),
            ("\\q", ""),
            ("\\C", ""),
            ("\\Z", ""),
            ("\\e", ""),
            ("\\é", ""),
            ("\\x{D800}", ""),
            ("\\u0041", ""),
            ("\\k<a>", ""),
            ("\\G", ""),
        ];
        let (p, w) = self.either(escapes, refused);
        (p.into(), w.into())
    }

    fn perl_class(&mut self) -> (String, String) {
        let classes: &[(&str, &[&str])] = &[
            ("\\d", &["0", "7"]),
            ("\\D", &["a", "٣"]),
            ("\\s", &[" ", "\t", "\n"]),
            ("\\S", &["x", "\u{b}"]),
            ("\\w", &["a", "_", "Z", "9"]),
            ("\\W", &["-", "é", "\u{212A}"]),
        ];
        let (p, ws) = self.rng.pick(classes);
        (p.into(), (self.rng.pick(ws)).into())
    }

    fn unicode_class(&mut self) -> (String, String) {
        let classes: &[(&str, &str)] = &[
            ("\\pL", "é"),
            ("\\pN", "٣"),
            ("\\PL", "1"),
            ("\\p{L}", "ж"),
            ("\\p{Lu}", "Σ"),
            ("\\p{Ll}", "ς"),
            ("\\p{Lt}", "ǅ"),
            ("\\p{Greek}", "α"),
            ("\\p{greek}", "Ω"),
            ("\\p{Latin}", "ñ"),
            ("\\p{Cyrillic}", "Д"),
            ("\\p{Han}", "中"),
            ("\\p{Common}", " "),
            ("\\p{^Greek}", "a"),
            ("\\P{^Greek}", "α"),
            ("\\p{Any}", "😀"),
            ("\\p{ASCII}", "~"),
            ("\\p{Letter}", "a"),
            ("\\p{lu}", "A"),
            ("\\p{Cased_Letter}", "a"),
            ("\\p{LC}", "B"),
            ("\\p{Lc}", "b"),
            ("\\p{Nd}", "5"),
            ("\\p{Zs}", "\u{a0}"),
            ("\\p{So}", "😀"),
            ("\\p{Sm}", "+"),
            ("\\p{P}", "."),
            ("\\p{Cc}", "\n"),
            ("\\p{C}", "\u{85}"),
            ("\\p{Assigned}", "a"),
            ("\\p{Cn}", "\u{378}"),
            ("\\p{Inherited}", "\u{300}"),
            ("\\p{cntrl}", "\t"),
            ("\\p{Punctuation}", "!"),
            ("\\p{punct}", "?"),
            ("\\p{digit}", "7"),
            ("\\p{Uppercase_Letter}", "Q"),
            ("\\p{upper-case letter}", "Q"),
        ];
        // Refused by Go (or, for POSIX, no class at all): picked now and then.
        let refused: &[(&str, &str)] = &[
            ("\\p{Old_Italic}", ""),
            ("\\p{Foo}", ""),
            ("\\p{", ""),
            ("\\p", ""),
            ("\\p{^}", ""),
            ("\\pé", ""),
            ("\\p{Unknown}", ""),
            ("\\p{Alphabetic}", ""),
        ];
        let (p, w) = self.either(classes, refused);
        (p.into(), w.into())
    }

    fn class(&mut self) -> (String, String) {
        let mut pattern = String::from("[");
        let negated = self.rng.chance(25);
        if negated {
            pattern.push('^');
        }
        let mut witness = String::new();
        if self.rng.chance(10) {
            pattern.push(']');
            witness = "]".into();
        }
        let items = self.rng.below(4) + usize::from(witness.is_empty());
        for _ in 0..items {
            let (p, w) = self.class_item();
            pattern.push_str(&p);
            if witness.is_empty() || self.rng.chance(30) {
                witness = w;
            }
        }
        if self.rng.chance(10) {
            pattern.push('-');
        }
        if !self.rng.chance(1) {
            pattern.push(']');
        }
        if negated {
            witness = (self.rng.pick(&["#", "\n", "é", "a"])).into();
        }
        (pattern, witness)
    }

    fn class_item(&mut self) -> (String, String) {
        match self.rng.below(11) {
            0 | 1 => {
                let c = self.rng.pick(ALPHABET);
                let text = if "\\[]^-".contains(c) {
                    format!("\\{c}")
                } else {
                    c.to_string()
                };
                (text, c.to_string())
            }
            2 | 3 => {
                let ranges: &[(&str, &str)] = &[
                    ("a-z", "q"),
                    ("A-Z", "K"),
                    ("0-9", "3"),
                    ("a-f", "c"),
                    ("%--", "+"),
                    ("--/", "."),
                    ("\\x41-\\x5a", "M"),
                    ("α-ω", "β"),
                    ("!-~", "~"),
                    ("\\x{0}-\\x{10FFFF}", "😀"),
                    ("k-k", "k"),
                    ("A-z", "_"),
                    ("\\t-\\r", "\n"),
                ];
                // Refused by Go (or, for POSIX, no class at all): picked now and then.
                let refused: &[(&str, &str)] = &[
                    ("z-a", ""),
                    ("a--", ""),
                    ("a-\\d", ""),
                    ("\\x{10}-\\x{1}", ""),
                ];
                let (p, w) = self.either(ranges, refused);
                (p.into(), w.into())
            }
            4 => self.perl_class(),
            5 => self.unicode_class(),
            6 => {
                let posix: &[(&str, &str)] = &[
                    ("[:alpha:]", "a"),
                    ("[:^alpha:]", "1"),
                    ("[:digit:]", "4"),
                    ("[:alnum:]", "Z"),
                    ("[:space:]", "\u{b}"),
                    ("[:upper:]", "Q"),
                    ("[:lower:]", "q"),
                    ("[:punct:]", "!"),
                    ("[:word:]", "_"),
                    ("[:xdigit:]", "f"),
                    ("[:blank:]", "\t"),
                    ("[:cntrl:]", "\u{7f}"),
                    ("[:graph:]", "~"),
                    ("[:print:]", " "),
                    ("[:ascii:]", "a"),
                    ("[:^space:]", "x"),
                ];
                // Refused by Go (or, for POSIX, no class at all): picked now and then.
                let refused: &[(&str, &str)] = &[
                    ("[:foo:]", ""),
                    ("[:Alpha:]", ""),
                    ("[:alpha]", "["),
                    ("[:", "["),
                ];
                let (p, w) = self.either(posix, refused);
                (p.into(), w.into())
            }
            7 => {
                // `-` beside a Perl class or an escape starts no range (issue 43).
                let mixed: &[(&str, &str)] = &[
                    ("\\w-\\.", "-"),
                    ("\\w-.", "."),
                    ("\\d-z", "-"),
                    ("a\\w-\\.", "."),
                    ("\\pL-9", "9"),
                    ("[:digit:]-x", "-"),
                    ("\\s-", "-"),
                    ("-\\w", "-"),
                    ("\\.-\\w", ""),
                    ("\\--a", "Z"),
                ];
                let (p, w) = self.rng.pick(mixed);
                (p.into(), w.into())
            }
            8 => {
                let escapes: &[(&str, &str)] = &[
                    ("\\]", "]"),
                    ("\\[", "["),
                    ("\\^", "^"),
                    ("\\-", "-"),
                    ("\\\\", "\\"),
                    ("\\n", "\n"),
                    ("\\x{263A}", "☺"),
                    ("\\101", "A"),
                    ("[", "["),
                    ("^", "^"),
                    ("&&", "&"),
                    ("~~", "~"),
                ];
                let refused: &[(&str, &str)] = &[("\\b", ""), ("\\Q", ""), ("\\A", "")];
                let (p, w) = self.either(escapes, refused);
                (p.into(), w.into())
            }
            _ => ("-".into(), "-".into()),
        }
    }

    fn group(&mut self) -> (String, String) {
        self.depth += 1;
        let (inner, witness) = self.alternation();
        self.depth -= 1;
        let mut branch = self.rng.below(12);
        if branch == 11 && !self.rng.chance(25) {
            branch = self.rng.below(11);
        }
        let open = match branch {
            0..=3 => "(".to_string(),
            4 | 5 => "(?:".to_string(),
            6 => format!("(?P<{}>", self.rng.pick(NAMES)),
            7 => format!("(?<{}>", self.rng.pick(NAMES)),
            8 => (self
                .rng
                .pick(&["(?i:", "(?s:", "(?m:", "(?U:", "(?i-s:", "(?-i:", "(?is:"]))
            .to_string(),
            9 => (self.rng.pick(&["(?i)(", "(?s)("])).to_string(),
            10 => String::new(),
            _ => {
                // Refused by Go.
                (self.rng.pick(&[
                    "(?x", "(?P=a)(", "(?P<>", "(?<a-b>", "(?'a'", "(?-)(", "(?i-)(", "(?--i:",
                    "(?P>", "(?#", "(?=", "(?!", "(?<=",
                ]))
                .to_string()
            }
        };
        if open.is_empty() {
            return (inner, witness);
        }
        let close = if self.rng.chance(1) { "" } else { ")" };
        (format!("{open}{inner}{close}"), witness)
    }

    /// A malformed fragment spliced into a pattern.
    fn malformed(&mut self) -> (String, String) {
        let bad = self.rng.pick(&[
            ")",
            "(",
            "[",
            "\\",
            "*",
            "+a",
            "?",
            "{2}",
            "(|*)",
            "(?i)*",
            "a**",
            "[a",
            "[^]",
            "(a{100}){100}",
            "((a{10}){10}){11}",
            "x{2,1}",
            "\\pX",
            "(*)",
            "|*",
            "a{1001}",
        ]);
        (bad.into(), String::new())
    }
}
