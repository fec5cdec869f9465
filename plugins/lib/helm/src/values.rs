//! Values as Helm combines them (`pkg/chart/common/util/coalesce.go`,
//! `pkg/chart/common/values.go`, `pkg/cli/values/options.go`):
//!
//! - [`coalesce_values`] (`CoalesceValues`): user values over the chart's defaults, maps
//!   merged, a user `null` deleting a default, subchart defaults coalesced under the
//!   subchart's name (its alias when it has one), globals copied down with the parent's
//!   winning, type mismatches reported as warnings.
//! - [`merge_values`] (`MergeValues`): the same with nulls kept.
//! - [`merge_maps`]: the `-f`/`--values` merge (later wins, maps merge, nulls kept).
//! - [`table`] and [`path_value`]: Helm's `Values.Table` / `Values.PathValue` lookups.
//!
//! Maps are shared like Go maps ([`Value::Map`] is reference counted); where Helm copies
//! deeply this copies deeply, and where Helm copies only the top level (globals) so does
//! this, so Helm's aliasing effects are reproduced.

use std::rc::Rc;

use capstan_gotmpl::value::{Map, MapRef, Value};

use crate::chart::Chart;

/// The key holding values shared with every subchart.
pub const GLOBAL_KEY: &str = "global";

/// Coalescing failed: a subchart's key holds something other than a map.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CoalesceError(pub String);

/// Go's `%t` verb for an arbitrary value (`true`, or `%!t(string=x)` for a non-bool).
fn format_percent_t(value: &Value) -> String {
    match value {
        Value::Bool(b) => b.to_string(),
        Value::Nil => "%!t(<nil>)".into(),
        other => format!("%!t({}={})", other.type_name(), other.to_go_string()),
    }
}

fn as_map(value: &Value) -> Option<&MapRef> {
    match value {
        Value::Map(map) => Some(map),
        _ => None,
    }
}

fn is_table(value: &Value) -> bool {
    matches!(value, Value::Map(_))
}

fn concat_prefix(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_owned()
    } else {
        format!("{a}.{b}")
    }
}

/// A snapshot of a map's entries (values shared), so the map can be changed while they
/// are visited.
fn entries(map: &MapRef) -> Vec<(String, Value)> {
    map.borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn get(map: &MapRef, key: &str) -> Option<Value> {
    map.borrow().get(key).cloned()
}

fn set(map: &MapRef, key: &str, value: Value) {
    map.borrow_mut().insert(key.to_owned(), value);
}

/// The state of one coalescing run: whether nulls are kept, and the warnings Helm logs.
struct Coalescer<'w> {
    merge: bool,
    warnings: &'w mut Vec<String>,
}

/// Helm's `CoalesceValues`: the values a chart renders with, from the user's values
/// (copied, never changed) and the chart's defaults, recursively through subcharts.
/// Type mismatches are skipped with a warning, as Helm logs them.
pub fn coalesce_values(chart: &Chart, user_values: &Value) -> Result<Value, CoalesceError> {
    coalesce_values_with_warnings(chart, user_values, &mut Vec::new())
}

/// [`coalesce_values`], collecting the warnings Helm would log.
pub fn coalesce_values_with_warnings(
    chart: &Chart,
    user_values: &Value,
    warnings: &mut Vec<String>,
) -> Result<Value, CoalesceError> {
    run(chart, user_values, false, warnings)
}

/// Helm's `MergeValues`: like [`coalesce_values`] but nulls are kept.
pub fn merge_values(chart: &Chart, user_values: &Value) -> Result<Value, CoalesceError> {
    run(chart, user_values, true, &mut Vec::new())
}

fn run(
    chart: &Chart,
    user_values: &Value,
    merge: bool,
    warnings: &mut Vec<String>,
) -> Result<Value, CoalesceError> {
    let copy = match user_values.deep_copy() {
        Value::Map(map) => map,
        _ => Rc::new(std::cell::RefCell::new(Map::new())),
    };
    let mut coalescer = Coalescer { merge, warnings };
    coalescer.coalesce(chart, &copy, "")?;
    Ok(Value::Map(copy))
}

impl Coalescer<'_> {
    fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }

    fn coalesce(
        &mut self,
        chart: &Chart,
        dest: &MapRef,
        prefix: &str,
    ) -> Result<(), CoalesceError> {
        self.coalesce_chart_values(chart, dest, prefix);
        self.coalesce_dependencies(chart, dest, prefix)
    }

    fn coalesce_dependencies(
        &mut self,
        chart: &Chart,
        dest: &MapRef,
        prefix: &str,
    ) -> Result<(), CoalesceError> {
        for subchart in chart.dependencies() {
            let name = subchart.name();
            let sub_values = match get(dest, name) {
                None => {
                    let fresh = Value::new_map();
                    set(dest, name, fresh.clone());
                    fresh
                }
                Some(existing) if is_table(&existing) => existing,
                Some(other) => {
                    return Err(CoalesceError(format!(
                        "type mismatch on {name}: {}",
                        format_percent_t(&other)
                    )));
                }
            };
            let Some(sub_map) = as_map(&sub_values) else {
                continue;
            };
            let sub_prefix = concat_prefix(prefix, chart.name());
            self.coalesce_globals(sub_map, dest, &sub_prefix);
            self.coalesce(subchart, sub_map, &sub_prefix)?;
        }
        Ok(())
    }

    /// Copy the globals of `src` (the parent's values) into `dest` (the subchart's).
    fn coalesce_globals(&mut self, dest: &MapRef, src: &MapRef, prefix: &str) {
        let dest_globals = match get(dest, GLOBAL_KEY) {
            None => Rc::new(std::cell::RefCell::new(Map::new())),
            Some(Value::Map(map)) => map,
            Some(_) => {
                self.warn(format!(
                    "warning: skipping globals because destination {GLOBAL_KEY} is not a table."
                ));
                return;
            }
        };
        let src_globals = match get(src, GLOBAL_KEY) {
            None => Rc::new(std::cell::RefCell::new(Map::new())),
            Some(Value::Map(map)) => map,
            Some(_) => {
                self.warn(format!(
                    "warning: skipping globals because source {GLOBAL_KEY} is not a table."
                ));
                return;
            }
        };
        for (key, value) in entries(&src_globals) {
            if let Value::Map(table) = &value {
                // A shallow copy, as Helm's copyMap: nested maps stay shared.
                let copied = Rc::new(std::cell::RefCell::new(table.borrow().clone()));
                match get(&dest_globals, &key) {
                    None => set(&dest_globals, &key, Value::Map(copied)),
                    Some(Value::Map(dest_table)) => {
                        let sub_prefix = concat_prefix(prefix, &key);
                        self.coalesce_tables_full_key(&copied, &dest_table, &sub_prefix, true);
                        set(&dest_globals, &key, Value::Map(copied));
                    }
                    Some(_) => self.warn(format!(
                        "Conflict: cannot merge map onto non-map for {key:?}. Skipping."
                    )),
                }
            } else if get(&dest_globals, &key).is_some_and(|v| is_table(&v)) {
                self.warn(format!("key {key} is table. Skipping"));
            } else {
                set(&dest_globals, &key, value);
            }
        }
        set(dest, GLOBAL_KEY, Value::Map(dest_globals));
    }

    /// Merge the chart's own defaults (a deep copy) under `values`.
    fn coalesce_chart_values(&mut self, chart: &Chart, values: &MapRef, prefix: &str) {
        let sub_prefix = concat_prefix(prefix, chart.name());
        let Value::Map(defaults) = chart.values.deep_copy() else {
            return;
        };
        for (key, default) in entries(&defaults) {
            match get(values, &key) {
                Some(Value::Nil) if !self.merge => {
                    values.borrow_mut().remove(&key);
                }
                Some(Value::Map(dest)) => match &default {
                    Value::Map(src) => {
                        let merge =
                            self.merge || chart.dependencies().iter().any(|d| d.name() == key);
                        if !merge {
                            clean_nil_values(src);
                        }
                        let full_key = concat_prefix(&sub_prefix, &key);
                        self.coalesce_tables_full_key(&dest, src, &full_key, merge);
                    }
                    Value::Nil => {}
                    _ => self.warn(format!(
                        "warning: skipped value for {sub_prefix}.{key}: Not a table."
                    )),
                },
                Some(_) => {}
                None => {
                    if !self.merge {
                        if default.is_nil() {
                            continue;
                        }
                        if let Value::Map(table) = &default {
                            clean_nil_values(table);
                        }
                    }
                    set(values, &key, default);
                }
            }
        }
    }

    /// Helm's `coalesceTablesFullKey`: `src` merged under `dst` (dst wins).
    fn coalesce_tables_full_key(&mut self, dst: &MapRef, src: &MapRef, prefix: &str, merge: bool) {
        if Rc::ptr_eq(dst, src) {
            return;
        }
        let src_non_nil: std::collections::BTreeSet<String> = src
            .borrow()
            .iter()
            .filter(|(_, v)| !v.is_nil())
            .map(|(k, _)| k.clone())
            .collect();
        for (key, value) in entries(dst) {
            if value.is_nil() {
                set(src, &key, Value::Nil);
            }
        }
        for (key, value) in entries(src) {
            let full_key = concat_prefix(prefix, &key);
            match get(dst, &key) {
                Some(Value::Nil) if !merge && src_non_nil.contains(&key) => {
                    dst.borrow_mut().remove(&key);
                }
                None => set(dst, &key, value),
                Some(existing) => {
                    if let Value::Map(src_table) = &value {
                        if let Value::Map(dst_table) = &existing {
                            self.coalesce_tables_full_key(dst_table, src_table, &full_key, merge);
                        } else {
                            self.warn(format!(
                                "warning: cannot overwrite table with non table for {full_key} ({})",
                                value.to_go_string()
                            ));
                        }
                    } else if is_table(&existing) && !value.is_nil() {
                        self.warn(format!(
                            "warning: destination for {full_key} is a table. Ignoring non-table value ({})",
                            value.to_go_string()
                        ));
                    }
                }
            }
        }
    }
}

/// Remove nil entries, recursively, in place.
fn clean_nil_values(map: &MapRef) {
    for (key, value) in entries(map) {
        match &value {
            Value::Nil => {
                map.borrow_mut().remove(&key);
            }
            Value::Map(inner) => clean_nil_values(inner),
            _ => {}
        }
    }
}

/// Helm's `CoalesceTables(dst, src)`: `src` merged into `dst` in place (dst wins, a dst
/// null deletes a src value); returns `dst` (or `src` when `dst` is not a map).
pub fn coalesce_tables(dst: &Value, src: &Value) -> Value {
    tables(dst, src, false, &mut Vec::new())
}

/// Helm's `MergeTables(dst, src)`: like [`coalesce_tables`] with nulls kept.
pub fn merge_tables(dst: &Value, src: &Value) -> Value {
    tables(dst, src, true, &mut Vec::new())
}

fn tables(dst: &Value, src: &Value, merge: bool, warnings: &mut Vec<String>) -> Value {
    match (dst, src) {
        (_, Value::Nil) => dst.clone(),
        (Value::Nil, _) => src.clone(),
        (Value::Map(d), Value::Map(s)) => {
            Coalescer { merge, warnings }.coalesce_tables_full_key(d, s, "", merge);
            dst.clone()
        }
        _ => dst.clone(),
    }
}

/// The loader's `MergeMaps` (also the CLI's `-f` merge): a new map with `b` over `a`,
/// maps merged recursively, everything else (nulls included) replaced.
pub fn merge_maps(a: &Value, b: &Value) -> Value {
    let mut out: Map = match a {
        Value::Map(map) => map.borrow().clone(),
        _ => Map::new(),
    };
    if let Value::Map(b) = b {
        for (key, value) in b.borrow().iter() {
            if is_table(value)
                && let Some(existing) = out.get(key)
                && is_table(existing)
            {
                let merged = merge_maps(existing, value);
                out.insert(key.clone(), merged);
                continue;
            }
            out.insert(key.clone(), value.clone());
        }
    }
    Value::from(out)
}

/// Helm's `Values.Table`: the map at a dotted path (`foo.bar`), shared with `values`;
/// `None` when some step is missing or not a map.
pub fn table(values: &Value, path: &str) -> Option<Value> {
    let mut current = values.clone();
    for step in path.split('.') {
        let next = as_map(&current)?.borrow().get(step).cloned()?;
        if !is_table(&next) {
            return None;
        }
        current = next;
    }
    Some(current)
}

/// Helm's `Values.PathValue`: the non-map value at a dotted path; `None` when absent or
/// a map.
pub fn path_value(values: &Value, path: &str) -> Option<Value> {
    if path.is_empty() {
        return None;
    }
    let (parent, key) = match path.rsplit_once('.') {
        Some((parent, key)) => (table(values, parent)?, key),
        None => (values.clone(), path),
    };
    let value = as_map(&parent)?.borrow().get(key).cloned()?;
    if is_table(&value) { None } else { Some(value) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::Metadata;
    use crate::test_support::{lookup, map};

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    fn chart(name: &str, values: Value, dependencies: Vec<Chart>) -> Chart {
        let mut chart = Chart::new(Metadata {
            name: name.into(),
            api_version: "v2".into(),
            version: "1.0.0".into(),
            ..Metadata::default()
        });
        chart.values = values;
        chart.set_dependencies(dependencies);
        chart
    }

    fn has(values: &Value, path: &str) -> bool {
        let (parent, key) = path.rsplit_once('.').unwrap_or(("", path));
        let parent = if parent.is_empty() {
            values.clone()
        } else {
            lookup(values, parent)
        };
        matches!(&parent, Value::Map(m) if m.borrow().contains_key(key))
    }

    fn t() -> Value {
        Value::Bool(true)
    }

    fn f() -> Value {
        Value::Bool(false)
    }

    /// The chart tree of Helm's TestCoalesceValues (coalesce_test.go): `moby` with
    /// subcharts `pequod` (which has `ahab`) and `spouter`.
    fn moby() -> Chart {
        let ahab = chart(
            "ahab",
            map(&[
                (
                    "global",
                    map(&[
                        ("nested", map(&[("foo", s("bar")), ("foo2", s("bar2"))])),
                        ("nested2", map(&[("l2", s("ahab"))])),
                    ]),
                ),
                ("scope", s("ahab")),
                ("name", s("ahab")),
                ("boat", t()),
                ("nested", map(&[("foo", f()), ("boat", t())])),
                ("object", map(&[("foo", s("bar"))])),
            ]),
            vec![],
        );
        let pequod = chart(
            "pequod",
            map(&[
                ("name", s("pequod")),
                ("scope", s("pequod")),
                ("global", map(&[("nested2", map(&[("l1", s("pequod"))]))])),
                ("boat", f()),
                (
                    "ahab",
                    map(&[("boat", f()), ("nested", map(&[("boat", f())]))]),
                ),
            ]),
            vec![ahab],
        );
        let spouter = chart(
            "spouter",
            map(&[
                ("scope", s("spouter")),
                ("global", map(&[("nested2", map(&[("l1", s("spouter"))]))])),
            ]),
            vec![],
        );
        chart(
            "moby",
            map(&[
                ("back", s("exists")),
                ("bottom", s("exists")),
                ("front", s("exists")),
                ("left", s("exists")),
                ("name", s("moby")),
                ("nested", map(&[("boat", t())])),
                ("override", s("bad")),
                ("right", s("exists")),
                ("scope", s("moby")),
                ("top", s("nope")),
                ("global", map(&[("nested2", map(&[("l0", s("moby"))]))])),
                (
                    "pequod",
                    map(&[
                        ("boat", s("maybe")),
                        (
                            "ahab",
                            map(&[
                                ("boat", s("maybe")),
                                ("nested", map(&[("boat", s("maybe"))])),
                            ]),
                        ),
                    ]),
                ),
            ]),
            vec![pequod, spouter],
        )
    }

    /// Helm's testCoalesceValuesYaml, as the YAML parser gives it.
    fn moby_user_values() -> Value {
        map(&[
            ("top", s("yup")),
            ("bottom", Value::Nil),
            ("right", Value::Nil),
            ("left", Value::Nil),
            ("front", Value::Nil),
            ("back", s("")),
            ("nested", map(&[("boat", Value::Nil)])),
            (
                "global",
                map(&[
                    ("name", s("Ishmael")),
                    ("subject", s("Queequeg")),
                    ("nested", map(&[("boat", t())])),
                ]),
            ),
            (
                "pequod",
                map(&[
                    ("boat", Value::Nil),
                    (
                        "global",
                        map(&[
                            ("name", s("Stinky")),
                            ("harpooner", s("Tashtego")),
                            (
                                "nested",
                                map(&[("boat", f()), ("sail", t()), ("foo2", Value::Nil)]),
                            ),
                        ]),
                    ),
                    (
                        "ahab",
                        map(&[
                            ("scope", s("whale")),
                            ("boat", Value::Nil),
                            ("nested", map(&[("foo", t()), ("boat", Value::Nil)])),
                            ("object", Value::Nil),
                        ]),
                    ),
                ]),
            ),
        ])
    }

    /// What `{{.a.b}}` prints: the value, or `<no value>` when absent or nil.
    fn expand(values: &Value, path: &str) -> String {
        let found = lookup(values, path);
        if found.is_nil() {
            "<no value>".into()
        } else {
            found.to_go_string()
        }
    }

    #[test]
    fn coalesce_follows_helms_rules() {
        // Helm TestCoalesceValues: same charts, same user values, same expectations.
        let user = moby_user_values();
        let before = user.to_go_string();
        let chart = moby();
        let v = coalesce_values(&chart, &user).unwrap();
        assert_eq!(
            user.to_go_string(),
            before,
            "user values are copied, not changed"
        );
        let expectations = [
            ("top", "yup"),
            ("back", ""),
            ("name", "moby"),
            ("global.name", "Ishmael"),
            ("global.subject", "Queequeg"),
            ("global.harpooner", "<no value>"),
            ("pequod.name", "pequod"),
            ("pequod.ahab.name", "ahab"),
            ("pequod.ahab.scope", "whale"),
            ("pequod.ahab.nested.foo", "true"),
            ("pequod.ahab.global.name", "Ishmael"),
            ("pequod.ahab.global.nested.foo", "bar"),
            ("pequod.ahab.global.nested.foo2", "<no value>"),
            ("pequod.ahab.global.subject", "Queequeg"),
            ("pequod.ahab.global.harpooner", "Tashtego"),
            ("pequod.global.name", "Ishmael"),
            ("pequod.global.nested.foo", "<no value>"),
            ("pequod.global.subject", "Queequeg"),
            ("spouter.global.name", "Ishmael"),
            ("spouter.global.harpooner", "<no value>"),
            ("global.nested.boat", "true"),
            ("pequod.global.nested.boat", "true"),
            ("spouter.global.nested.boat", "true"),
            ("pequod.global.nested.sail", "true"),
            ("spouter.global.nested.sail", "<no value>"),
            ("global.nested2.l0", "moby"),
            ("global.nested2.l1", "<no value>"),
            ("global.nested2.l2", "<no value>"),
            ("pequod.global.nested2.l0", "moby"),
            ("pequod.global.nested2.l1", "pequod"),
            ("pequod.global.nested2.l2", "<no value>"),
            ("pequod.ahab.global.nested2.l0", "moby"),
            ("pequod.ahab.global.nested2.l1", "pequod"),
            ("pequod.ahab.global.nested2.l2", "ahab"),
            ("spouter.global.nested2.l0", "moby"),
            ("spouter.global.nested2.l1", "spouter"),
            ("spouter.global.nested2.l2", "<no value>"),
        ];
        for (path, want) in expectations {
            assert_eq!(expand(&v, path), want, "{{{{.{path}}}}}");
        }
        for gone in [
            "bottom",
            "right",
            "left",
            "front",
            "nested.boat",
            "pequod.boat",
            "pequod.ahab.boat",
            "pequod.ahab.nested.boat",
            "pequod.ahab.object",
        ] {
            assert!(!has(&v, gone), "{gone} should be removed");
        }
    }

    #[test]
    fn coalesce_tables_like_helm() {
        // Helm TestCoalesceTables.
        let dst = map(&[
            ("name", s("Ishmael")),
            (
                "address",
                map(&[
                    ("street", s("123 Spouter Inn Ct.")),
                    ("city", s("Nantucket")),
                    ("country", Value::Nil),
                ]),
            ),
            (
                "details",
                map(&[("friends", Value::from(vec![s("Tashtego")]))]),
            ),
            ("boat", s("pequod")),
            ("hole", Value::Nil),
        ]);
        let src = map(&[
            ("occupation", s("whaler")),
            (
                "address",
                map(&[
                    ("state", s("MA")),
                    ("street", s("234 Spouter Inn Ct.")),
                    ("country", s("US")),
                ]),
            ),
            ("details", s("empty")),
            ("boat", map(&[("mast", Value::Bool(true))])),
            ("hole", s("black")),
        ]);
        let out = coalesce_tables(&dst, &src);
        assert_eq!(lookup(&out, "name").to_go_string(), "Ishmael");
        assert_eq!(lookup(&out, "occupation").to_go_string(), "whaler");
        assert_eq!(lookup(&out, "address.state").to_go_string(), "MA");
        assert_eq!(
            lookup(&out, "address.street").to_go_string(),
            "123 Spouter Inn Ct."
        );
        assert_eq!(lookup(&out, "address.city").to_go_string(), "Nantucket");
        assert!(
            !has(&out, "address.country"),
            "a dst null removes the src value"
        );
        assert_eq!(lookup(&out, "details.friends").to_go_string(), "[Tashtego]");
        assert_eq!(lookup(&out, "boat").to_go_string(), "pequod");
        assert!(!has(&out, "hole"));
    }

    #[test]
    fn merge_tables_keeps_nulls() {
        // Helm TestMergeTables: nulls are kept.
        let dst = map(&[
            ("hole", Value::Nil),
            ("address", map(&[("country", Value::Nil)])),
        ]);
        let src = map(&[
            ("hole", s("black")),
            ("address", map(&[("country", s("US"))])),
        ]);
        let out = merge_tables(&dst, &src);
        assert!(has(&out, "hole") && lookup(&out, "hole").is_nil());
        assert!(has(&out, "address.country") && lookup(&out, "address.country").is_nil());
    }

    #[test]
    fn subchart_key_must_be_a_table() {
        let parent = chart(
            "parent",
            Value::new_map(),
            vec![chart("sub", Value::new_map(), vec![])],
        );
        let error = coalesce_values(&parent, &map(&[("sub", s("x"))])).unwrap_err();
        assert_eq!(error.to_string(), "type mismatch on sub: %!t(string=x)");
    }

    #[test]
    fn merge_maps_like_helm() {
        // Helm pkg/cli/values TestMergeValues / loader TestMergeMaps.
        let a = map(&[("foo", map(&[("bar", s("a"))])), ("keep", s("k"))]);
        let b = map(&[("foo", map(&[("baz", s("b"))])), ("keep", Value::Nil)]);
        let out = merge_maps(&a, &b);
        assert_eq!(out.to_go_string(), "map[foo:map[bar:a baz:b] keep:<nil>]");
        let replaced = merge_maps(
            &map(&[("foo", s("x"))]),
            &map(&[("foo", map(&[("y", s("z"))]))]),
        );
        assert_eq!(replaced.to_go_string(), "map[foo:map[y:z]]");
    }

    #[test]
    fn path_value_and_table() {
        // Helm pkg/chart/common/values_test.go TestPathValue / TestTable shapes.
        let values = map(&[("chapter", map(&[("one", map(&[("title", s("Loomings"))]))]))]);
        assert_eq!(
            path_value(&values, "chapter.one.title")
                .unwrap()
                .to_go_string(),
            "Loomings"
        );
        assert!(path_value(&values, "chapter.one").is_none());
        assert!(path_value(&values, "chapter.two.title").is_none());
        assert!(table(&values, "chapter.one").is_some());
        assert!(table(&values, "chapter.one.title").is_none());
    }

    #[test]
    fn merge_values_keeps_nulls_like_helm() {
        // Helm TestMergeValues (same user values as TestCoalesceValues).
        let ahab = chart(
            "ahab",
            map(&[
                (
                    "global",
                    map(&[
                        ("nested", map(&[("foo", s("bar"))])),
                        ("nested2", map(&[("l2", s("ahab"))])),
                    ]),
                ),
                ("scope", s("ahab")),
                ("name", s("ahab")),
                ("boat", t()),
                ("nested", map(&[("foo", f()), ("bar", t())])),
            ]),
            vec![],
        );
        let pequod = chart(
            "pequod",
            map(&[
                ("name", s("pequod")),
                ("scope", s("pequod")),
                ("global", map(&[("nested2", map(&[("l1", s("pequod"))]))])),
            ]),
            vec![ahab],
        );
        let spouter = chart(
            "spouter",
            map(&[
                ("scope", s("spouter")),
                ("global", map(&[("nested2", map(&[("l1", s("spouter"))]))])),
            ]),
            vec![],
        );
        let moby = chart(
            "moby",
            map(&[
                ("back", s("exists")),
                ("bottom", s("exists")),
                ("front", s("exists")),
                ("left", s("exists")),
                ("name", s("moby")),
                ("nested", map(&[("boat", t())])),
                ("override", s("bad")),
                ("right", s("exists")),
                ("scope", s("moby")),
                ("top", s("nope")),
                ("global", map(&[("nested2", map(&[("l0", s("moby"))]))])),
            ]),
            vec![pequod, spouter],
        );
        let user = moby_user_values();
        let before = user.to_go_string();
        let v = merge_values(&moby, &user).unwrap();
        assert_eq!(user.to_go_string(), before);
        let expectations = [
            ("top", "yup"),
            ("back", ""),
            ("name", "moby"),
            ("global.name", "Ishmael"),
            ("global.subject", "Queequeg"),
            ("global.harpooner", "<no value>"),
            ("pequod.name", "pequod"),
            ("pequod.ahab.name", "ahab"),
            ("pequod.ahab.scope", "whale"),
            ("pequod.ahab.nested.foo", "true"),
            ("pequod.ahab.global.name", "Ishmael"),
            ("pequod.ahab.global.nested.foo", "bar"),
            ("pequod.ahab.global.subject", "Queequeg"),
            ("pequod.ahab.global.harpooner", "Tashtego"),
            ("pequod.global.name", "Ishmael"),
            ("pequod.global.nested.foo", "<no value>"),
            ("pequod.global.subject", "Queequeg"),
            ("spouter.global.name", "Ishmael"),
            ("spouter.global.harpooner", "<no value>"),
            ("global.nested.boat", "true"),
            ("pequod.global.nested.boat", "true"),
            ("spouter.global.nested.boat", "true"),
            ("pequod.global.nested.sail", "true"),
            ("spouter.global.nested.sail", "<no value>"),
            ("global.nested2.l0", "moby"),
            ("global.nested2.l1", "<no value>"),
            ("global.nested2.l2", "<no value>"),
            ("pequod.global.nested2.l0", "moby"),
            ("pequod.global.nested2.l1", "pequod"),
            ("pequod.global.nested2.l2", "<no value>"),
            ("pequod.ahab.global.nested2.l0", "moby"),
            ("pequod.ahab.global.nested2.l1", "pequod"),
            ("pequod.ahab.global.nested2.l2", "ahab"),
            ("spouter.global.nested2.l0", "moby"),
            ("spouter.global.nested2.l1", "spouter"),
            ("spouter.global.nested2.l2", "<no value>"),
        ];
        for (path, want) in expectations {
            assert_eq!(expand(&v, path), want, "{{{{.{path}}}}}");
        }
        for kept_null in ["bottom", "right", "left", "front"] {
            assert!(
                has(&v, kept_null) && lookup(&v, kept_null).is_nil(),
                "{kept_null}"
            );
        }
        assert!(has(&v, "nested.boat"));
        assert!(has(&v, "pequod.ahab.boat"));
        assert!(has(&v, "pequod.ahab.nested.bar"));
    }

    #[test]
    fn coalesce_warnings_like_helm() {
        // Helm TestCoalesceValuesWarnings.
        let level3 = chart(
            "level3",
            map(&[
                ("name", s("ahab")),
                ("boat", t()),
                (
                    "spear",
                    map(&[("tip", t()), ("sail", map(&[("cotton", t())]))]),
                ),
            ]),
            vec![],
        );
        let level2 = chart("level2", map(&[("name", s("pequod"))]), vec![level3]);
        let level1 = chart("level1", map(&[("name", s("moby"))]), vec![level2]);
        let user = map(&[(
            "level2",
            map(&[(
                "level3",
                map(&[
                    ("boat", map(&[("mast", t())])),
                    (
                        "spear",
                        map(&[("tip", map(&[("sharp", t())])), ("sail", t())]),
                    ),
                ]),
            )]),
        )]);
        let mut warnings = Vec::new();
        coalesce_values_with_warnings(&level1, &user, &mut warnings).unwrap();
        for expected in [
            "warning: skipped value for level1.level2.level3.boat: Not a table.",
            "warning: destination for level1.level2.level3.spear.tip is a table. Ignoring non-table value (true)",
            "warning: cannot overwrite table with non table for level1.level2.level3.spear.sail (map[cotton:true])",
        ] {
            assert!(
                warnings.iter().any(|w| w == expected),
                "{expected} in {warnings:?}"
            );
        }
    }

    #[test]
    fn concat_prefix_like_helm() {
        // Helm TestConcatPrefix.
        assert_eq!(concat_prefix("", "b"), "b");
        assert_eq!(concat_prefix("a", "b"), "a.b");
    }

    #[test]
    fn empty_default_map_keeps_user_nils() {
        // Helm TestCoalesceValuesEmptyMapWithNils.
        let c = chart("test", map(&[("data", Value::new_map())]), vec![]);
        let v = coalesce_values(
            &c,
            &map(&[("data", map(&[("foo", s("bar")), ("baz", Value::Nil)]))]),
        )
        .unwrap();
        assert_eq!(expand(&v, "data.foo"), "bar");
        assert!(has(&v, "data.baz") && lookup(&v, "data.baz").is_nil());
    }

    #[test]
    fn subchart_default_nils_are_cleaned() {
        // Helm TestCoalesceValuesSubchartDefaultNilsCleaned.
        let child = chart(
            "child",
            map(&[("keyMapping", map(&[("password", Value::Nil)]))]),
            vec![],
        );
        let parent = chart("parent", Value::new_map(), vec![child]);
        let v = coalesce_values(&parent, &Value::new_map()).unwrap();
        assert!(matches!(lookup(&v, "child.keyMapping"), Value::Map(_)));
        assert!(!has(&v, "child.keyMapping.password"));
    }

    #[test]
    fn user_null_erases_subchart_default() {
        // Helm TestCoalesceValuesUserNullErasesSubchartDefault.
        let child = chart("child", map(&[("someKey", s("default"))]), vec![]);
        let parent = chart("parent", Value::new_map(), vec![child]);
        let v =
            coalesce_values(&parent, &map(&[("child", map(&[("someKey", Value::Nil)]))])).unwrap();
        assert!(!has(&v, "child.someKey"));
    }

    #[test]
    fn subchart_nil_does_not_shadow_global() {
        // Helm TestCoalesceValuesSubchartNilDoesNotShadowGlobal.
        let child = chart(
            "child",
            map(&[("ingress", map(&[("feature", Value::Nil)]))]),
            vec![],
        );
        let parent = chart("parent", Value::new_map(), vec![child]);
        let user = map(&[("global", map(&[("ingress", map(&[("feature", t())]))]))]);
        let v = coalesce_values(&parent, &user).unwrap();
        assert!(matches!(lookup(&v, "child.ingress"), Value::Map(_)));
        assert!(!has(&v, "child.ingress.feature"));
    }

    #[test]
    fn subchart_nil_cleaned_when_user_partially_overrides() {
        // Helm TestCoalesceValuesSubchartNilCleanedWhenUserPartiallyOverrides.
        let child = chart(
            "child",
            map(&[(
                "keyMapping",
                map(&[("password", Value::Nil), ("format", s("bcrypt"))]),
            )]),
            vec![],
        );
        let parent = chart("parent", Value::new_map(), vec![child]);
        let user = map(&[(
            "child",
            map(&[("keyMapping", map(&[("format", s("sha256"))]))]),
        )]);
        let v = coalesce_values(&parent, &user).unwrap();
        assert_eq!(expand(&v, "child.keyMapping.format"), "sha256");
        assert!(!has(&v, "child.keyMapping.password"));
    }
}
