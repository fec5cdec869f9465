//! Dependency processing as Helm runs it before rendering (`pkg/chart/v2/util/
//! dependencies.go`, `ProcessDependencies`):
//!
//! 1. Enabled/alias, per chart, recursively (only through charts that declare
//!    `dependencies:`): each declared dependency is matched to a loaded subchart by name
//!    and version constraint and copied (renamed to its alias when it has one); loaded
//!    subcharts not declared stay. With the chart's values coalesced against the user's,
//!    tags (`tags.<t>`) and then conditions (the first path of the comma list that holds a
//!    bool, prefixed with the chain of subchart names) decide which stay; disabled ones
//!    are removed from both the subcharts and the metadata.
//! 2. Import values, children first: `import-values` entries (a string `x` meaning the
//!    child's `exports.x`, or `{child, parent}`) copy child tables into the parent, below
//!    the parent's own values; the result (nulls kept) replaces the chart's values, and
//!    the entries are normalised to `{child, parent}` maps.

use capstan_gotmpl::value::{Map, Value};

use crate::chart::{Chart, Dependency};
use crate::semver::is_compatible_range;
use crate::values::{
    CoalesceError, coalesce_tables, coalesce_values, merge_tables, merge_values, path_value, table,
};

/// Dependency processing failed (values could not be coalesced).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DependencyError(pub String);

impl From<CoalesceError> for DependencyError {
    fn from(error: CoalesceError) -> Self {
        DependencyError(error.0)
    }
}

/// Helm's `ProcessDependencies(chart, values)`: enable/alias the subcharts, then import
/// values. `user_values` are the user's values (`-f`/`--set`), not changed. Warnings Helm
/// would log are dropped; use [`process_dependencies_with_warnings`] to see them.
pub fn process_dependencies(chart: &mut Chart, user_values: &Value) -> Result<(), DependencyError> {
    process_dependencies_with_warnings(chart, user_values, &mut Vec::new())
}

/// [`process_dependencies`], collecting the warnings Helm would log.
pub fn process_dependencies_with_warnings(
    chart: &mut Chart,
    user_values: &Value,
    warnings: &mut Vec<String>,
) -> Result<(), DependencyError> {
    process_enabled(chart, user_values, "", warnings)?;
    process_import_values_recursively(chart, true, warnings)
}

/// What `helm install`/`template` checks before rendering (`pkg/cmd/install.go`):
/// the chart must be an application chart (`checkIfInstallable`), and every dependency
/// declared in Chart.yaml must be loaded from `charts/` (`action.CheckDependencies`,
/// matched by name only).
pub fn check_installable(chart: &Chart) -> Result<(), DependencyError> {
    match chart.metadata.chart_type.as_str() {
        "" | "application" => {}
        other => {
            return Err(DependencyError(format!(
                "{other} charts are not installable"
            )));
        }
    }
    let missing: Vec<&str> = chart
        .metadata
        .dependencies
        .iter()
        .flatten()
        .filter(|d| !chart.dependencies().iter().any(|c| c.name() == d.name))
        .map(|d| d.name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(DependencyError(format!(
        "an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {}",
        missing.join(", ")
    )))
}

/// Helm's `processDependencyEnabled(chart, values, "")` alone: aliases, tags and
/// conditions.
pub fn process_dependency_enabled(
    chart: &mut Chart,
    values: &Value,
) -> Result<(), DependencyError> {
    process_enabled(chart, values, "", &mut Vec::new())
}

/// Helm's `processDependencyImportValues(chart, merge)` alone: with `merge` nulls are
/// kept (what `ProcessDependencies` uses), without it they are coalesced away.
pub fn process_dependency_import_values(
    chart: &mut Chart,
    merge: bool,
) -> Result<(), DependencyError> {
    process_import_values_recursively(chart, merge, &mut Vec::new())
}

/// The first loaded subchart matching a declared dependency (name and version range),
/// copied and renamed to the alias.
fn alias_dependency(charts: &[Chart], dependency: &Dependency) -> Option<Chart> {
    let found = charts.iter().find(|c| {
        c.name() == dependency.name && is_compatible_range(&dependency.version, &c.metadata.version)
    })?;
    let mut copy = found.clone();
    if !dependency.alias.is_empty() {
        copy.metadata.name = dependency.alias.clone();
    }
    Some(copy)
}

fn process_enabled(
    chart: &mut Chart,
    values: &Value,
    path: &str,
    warnings: &mut Vec<String>,
) -> Result<(), DependencyError> {
    let Some(mut declared) = chart.metadata.dependencies.take() else {
        return Ok(());
    };
    let loaded = chart.take_dependencies();
    let mut kept: Vec<Chart> = loaded
        .iter()
        .filter(|existing| {
            !declared.iter().any(|d| {
                existing.name() == d.name
                    && is_compatible_range(&d.version, &existing.metadata.version)
            })
        })
        .cloned()
        .collect();
    for dependency in &mut declared {
        if let Some(copy) = alias_dependency(&loaded, dependency) {
            kept.push(copy);
        }
        if !dependency.alias.is_empty() {
            dependency.name = dependency.alias.clone();
        }
    }
    for dependency in &mut declared {
        dependency.enabled = true;
    }
    chart.metadata.dependencies = Some(declared);
    chart.set_dependencies(kept);

    let coalesced = coalesce_values(chart, values)?;
    let declared = chart.metadata.dependencies.get_or_insert_with(Vec::new);
    apply_tags(declared, &coalesced, warnings);
    apply_conditions(declared, &coalesced, path, warnings);

    let disabled: Vec<String> = declared
        .iter()
        .filter(|d| !d.enabled)
        .map(|d| d.name.clone())
        .collect();
    let remaining_declared: Vec<Dependency> = declared
        .drain(..)
        .filter(|d| !disabled.contains(&d.name))
        .collect();
    let mut remaining: Vec<Chart> = chart
        .take_dependencies()
        .into_iter()
        .filter(|c| !disabled.iter().any(|name| name == c.name()))
        .collect();
    // Re-link before recursing so each subchart knows its parents.
    chart.set_dependencies(std::mem::take(&mut remaining));
    let mut children = chart.take_dependencies();
    for child in &mut children {
        let child_path = format!("{path}{}.", child.name());
        process_enabled(child, &coalesced, &child_path, warnings)?;
    }
    chart.metadata.dependencies = if remaining_declared.is_empty() {
        None
    } else {
        Some(remaining_declared)
    };
    chart.set_dependencies(children);
    Ok(())
}

/// Tags: a dependency with a true tag is enabled; with only false tags, disabled.
fn apply_tags(dependencies: &mut [Dependency], values: &Value, warnings: &mut Vec<String>) {
    let Some(Value::Map(tags)) = table(values, "tags") else {
        return;
    };
    let tags = tags.borrow();
    for dependency in dependencies {
        let (mut has_true, mut has_false) = (false, false);
        for tag in &dependency.tags {
            match tags.get(tag) {
                Some(Value::Bool(true)) => has_true = true,
                Some(Value::Bool(false)) => has_false = true,
                Some(_) => warnings.push(format!(
                    "returned non-bool value tag={tag} chart={}",
                    dependency.name
                )),
                None => {}
            }
        }
        dependency.enabled = has_true || !has_false;
    }
}

/// Conditions: the first path (of the comma-separated list) holding a bool decides.
fn apply_conditions(
    dependencies: &mut [Dependency],
    values: &Value,
    path: &str,
    warnings: &mut Vec<String>,
) {
    for dependency in dependencies {
        let condition = dependency.condition.trim().to_owned();
        for part in condition.split(',') {
            if part.is_empty() {
                continue;
            }
            match path_value(values, &format!("{path}{part}")) {
                Some(Value::Bool(enabled)) => {
                    dependency.enabled = enabled;
                    break;
                }
                Some(_) => warnings.push(format!(
                    "returned non-bool value path={part} chart={}",
                    dependency.name
                )),
                None => {}
            }
        }
    }
}

fn process_import_values_recursively(
    chart: &mut Chart,
    merge: bool,
    warnings: &mut Vec<String>,
) -> Result<(), DependencyError> {
    for child in chart.dependencies_mut() {
        process_import_values_recursively(child, merge, warnings)?;
    }
    process_import_values(chart, merge, warnings)
}

/// A deep copy without nil entries (recursively through maps).
fn trim_nil_values(values: &Value) -> Value {
    match values {
        Value::Map(map) => Value::from(
            map.borrow()
                .iter()
                .filter(|(_, v)| !v.is_nil())
                .map(|(k, v)| (k.clone(), trim_nil_values(v)))
                .collect::<Map>(),
        ),
        other => other.deep_copy(),
    }
}

/// `{path[0]: {path[1]: ... data}}`, or `data` itself for `.`.
fn path_to_map(path: &str, data: Value) -> Value {
    if path == "." {
        return data;
    }
    let mut current = data;
    for step in path.split('.').rev() {
        let mut wrapper = Map::new();
        wrapper.insert(step.to_owned(), current);
        current = Value::from(wrapper);
    }
    current
}

fn normalised_import(child: &str, parent: &str) -> Value {
    let mut entry = Map::new();
    entry.insert("child".into(), Value::from(child));
    entry.insert("parent".into(), Value::from(parent));
    Value::from(entry)
}

fn process_import_values(
    chart: &mut Chart,
    merge: bool,
    warnings: &mut Vec<String>,
) -> Result<(), DependencyError> {
    if chart.metadata.dependencies.is_none() {
        return Ok(());
    }
    let combine = |dst: &Value, src: &Value| {
        if merge {
            merge_tables(dst, src)
        } else {
            coalesce_tables(dst, src)
        }
    };
    let merged = if merge {
        merge_values(chart, &Value::Nil)?
    } else {
        coalesce_values(chart, &Value::Nil)?
    };
    let mut imported = Value::new_map();
    let mut declared = chart.metadata.dependencies.take().unwrap_or_default();
    for dependency in &mut declared {
        let mut normalised = Vec::new();
        for entry in &dependency.import_values {
            match entry {
                Value::Map(fields) => {
                    let field = |key: &str| {
                        fields
                            .borrow()
                            .get(key)
                            .map_or_else(|| "<nil>".to_owned(), Value::to_go_string)
                    };
                    let (child, parent) = (field("child"), field("parent"));
                    normalised.push(normalised_import(&child, &parent));
                    match table(&merged, &format!("{}.{child}", dependency.name)) {
                        Some(source) => {
                            imported = combine(&imported, &path_to_map(&parent, source));
                        }
                        None => warnings.push(format!(
                            "ImportValues missing table from chart {}: {child}",
                            dependency.name
                        )),
                    }
                }
                Value::String(name) => {
                    let child = format!("exports.{name}");
                    normalised.push(normalised_import(&child, "."));
                    match table(&merged, &format!("{}.{child}", dependency.name)) {
                        Some(source) => imported = combine(&imported, &source),
                        None => warnings.push(format!(
                            "ImportValues missing table: {}.{child}",
                            dependency.name
                        )),
                    }
                }
                _ => {}
            }
        }
        dependency.import_values = normalised;
    }
    chart.metadata.dependencies = Some(declared);
    // Imports rank below the chart's own values; the copy keeps shared maps apart.
    chart.values = if merge {
        merge_tables(&merged.deep_copy(), &imported)
    } else {
        coalesce_tables(&trim_nil_values(&merged), &imported)
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::Metadata;
    use crate::test_support::{lookup, map};

    fn chart(name: &str, version: &str, values: Value) -> Chart {
        let mut chart = Chart::new(Metadata {
            name: name.into(),
            api_version: "v2".into(),
            version: version.into(),
            ..Metadata::default()
        });
        chart.values = values;
        chart
    }

    fn declared(name: &str, version: &str) -> Dependency {
        Dependency {
            name: name.into(),
            version: version.into(),
            ..Dependency::default()
        }
    }

    fn names(chart: &Chart) -> Vec<String> {
        let mut names: Vec<String> = chart
            .dependencies()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn installable_checks_like_helm_install() {
        let mut library = chart("lib", "1.0.0", Value::new_map());
        library.metadata.chart_type = "library".into();
        assert_eq!(
            check_installable(&library).unwrap_err().0,
            "library charts are not installable"
        );
        let mut parent = chart("parent", "1.0.0", Value::new_map());
        parent.set_dependencies(vec![chart("present", "1.0.0", Value::new_map())]);
        parent.metadata.dependencies = Some(vec![
            declared("present", "1.0.0"),
            declared("absent", "1.0.0"),
            declared("gone", "2.0.0"),
        ]);
        assert!(
            check_installable(&parent)
                .unwrap_err()
                .0
                .ends_with("found in Chart.yaml, but missing in charts/ directory: absent, gone")
        );
        parent.metadata.dependencies = Some(vec![declared("present", "9.9.9")]);
        assert_eq!(check_installable(&parent), Ok(()), "matched by name only");
    }

    #[test]
    fn aliases_copy_the_subchart() {
        // Helm TestDependentChartAliases: two aliases of one subchart plus the original.
        let mut parent = chart("parent", "1.0.0", Value::new_map());
        parent.set_dependencies(vec![chart("mariner", "4.3.2", Value::new_map())]);
        let mut first = declared("mariner", "4.3.2");
        first.alias = "mariners1".into();
        let mut second = declared("mariner", "4.3.2");
        second.alias = "mariners2".into();
        parent.metadata.dependencies = Some(vec![declared("mariner", "4.3.2"), first, second]);
        process_dependencies(&mut parent, &Value::new_map()).unwrap();
        assert_eq!(names(&parent), ["mariner", "mariners1", "mariners2"]);
        let aliased = parent
            .dependencies()
            .iter()
            .find(|c| c.name() == "mariners2")
            .unwrap();
        assert_eq!(aliased.chart_full_path(), "parent/charts/mariners2");
    }

    #[test]
    fn a_version_mismatch_keeps_the_loaded_chart_unaliased() {
        // Helm TestDependentChartAliases: an alias whose version does not match is dropped.
        let mut parent = chart("parent", "1.0.0", Value::new_map());
        parent.set_dependencies(vec![chart("mariner", "4.3.2", Value::new_map())]);
        let mut aliased = declared("mariner", "1.0.0");
        aliased.alias = "other".into();
        parent.metadata.dependencies = Some(vec![aliased]);
        process_dependencies(&mut parent, &Value::new_map()).unwrap();
        assert_eq!(names(&parent), ["mariner"]);
    }

    #[test]
    fn tags_then_conditions() {
        let subchart = |name: &str| chart(name, "0.1.0", Value::new_map());
        let mut parent = chart(
            "parent",
            "1.0.0",
            map(&[
                (
                    "tags",
                    map(&[
                        ("front-end", Value::Bool(false)),
                        ("back-end", Value::Bool(true)),
                    ]),
                ),
                ("subchart2", map(&[("enabled", Value::Bool(true))])),
            ]),
        );
        parent.set_dependencies(vec![
            subchart("subchart1"),
            subchart("subchart2"),
            subchart("subchart3"),
        ]);
        let mut one = declared("subchart1", "0.1.0");
        one.tags = vec!["front-end".into()];
        let mut two = declared("subchart2", "0.1.0");
        two.tags = vec!["front-end".into()];
        two.condition = "subchart2.enabled".into();
        let mut three = declared("subchart3", "0.1.0");
        three.tags = vec!["front-end".into(), "back-end".into()];
        parent.metadata.dependencies = Some(vec![one, two, three]);
        process_dependencies(&mut parent, &Value::new_map()).unwrap();
        assert_eq!(names(&parent), ["subchart2", "subchart3"]);
        let remaining: Vec<&str> = parent
            .metadata
            .dependencies
            .iter()
            .flatten()
            .map(|d| d.name.as_str())
            .collect();
        assert_eq!(remaining, ["subchart2", "subchart3"]);

        // User values override the chart's: disable subchart2 by condition.
        let mut again = parent.clone();
        let user = map(&[("subchart2", map(&[("enabled", Value::Bool(false))]))]);
        process_dependencies(&mut again, &user).unwrap();
        assert_eq!(names(&again), ["subchart3"]);
    }

    #[test]
    fn import_values_rank_below_the_parents_own() {
        // Helm TestImportValues shapes: string exports and child/parent maps.
        let child = chart(
            "child",
            "1.0.0",
            map(&[
                (
                    "exports",
                    map(&[(
                        "data",
                        map(&[
                            ("x", Value::from("from-child")),
                            ("y", Value::from("child-y")),
                        ]),
                    )]),
                ),
                ("deep", map(&[("table", map(&[("z", Value::from("z"))]))])),
            ]),
        );
        let mut parent = chart("parent", "1.0.0", map(&[("y", Value::from("parent-y"))]));
        parent.set_dependencies(vec![child]);
        let mut dependency = declared("child", "1.0.0");
        let mut pair = Map::new();
        pair.insert("child".into(), Value::from("deep.table"));
        pair.insert("parent".into(), Value::from("imported.here"));
        dependency.import_values = vec![Value::from("data"), Value::from(pair)];
        parent.metadata.dependencies = Some(vec![dependency]);
        process_dependencies(&mut parent, &Value::new_map()).unwrap();
        assert_eq!(lookup(&parent.values, "x").to_go_string(), "from-child");
        assert_eq!(lookup(&parent.values, "y").to_go_string(), "parent-y");
        assert_eq!(
            lookup(&parent.values, "imported.here.z").to_go_string(),
            "z"
        );
        let normalised = &parent.metadata.dependencies.as_ref().unwrap()[0].import_values;
        assert_eq!(
            Value::from(normalised.clone()).to_go_string(),
            "[map[child:exports.data parent:.] map[child:deep.table parent:imported.here]]"
        );
    }

    #[test]
    fn nested_conditions_are_prefixed_with_the_chain() {
        let mut inner = chart("inner", "1.0.0", Value::new_map());
        let mut leaf_dependency = declared("leaf", "1.0.0");
        leaf_dependency.condition = "leaf.enabled".into();
        inner.metadata.dependencies = Some(vec![leaf_dependency]);
        inner.set_dependencies(vec![chart("leaf", "1.0.0", Value::new_map())]);
        let mut parent = chart("parent", "1.0.0", Value::new_map());
        parent.metadata.dependencies = Some(vec![declared("inner", "1.0.0")]);
        parent.set_dependencies(vec![inner]);
        let user = map(&[(
            "inner",
            map(&[("leaf", map(&[("enabled", Value::Bool(false))]))]),
        )]);
        process_dependencies(&mut parent, &user).unwrap();
        let inner = &parent.dependencies()[0];
        assert!(inner.dependencies().is_empty());
        assert!(inner.metadata.dependencies.is_none());
    }
}
