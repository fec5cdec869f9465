//! Helm's rendering pipeline in Rust: chart loading (directories and archives), values
//! coalescing, dependencies, the template engine with Helm's functions and built-in
//! objects, output assembly as `helm template` prints it, and Helm v3 release records.

pub mod chart;
pub mod corpus;
pub mod dependencies;
pub mod engine;
pub mod funcs;
pub mod glob;
pub mod ignore;
pub mod load;
pub mod objects;
#[cfg(not(target_family = "wasm"))]
pub mod oracles;
pub mod output;
pub mod package;
pub mod pipeline;
pub mod postrender;
pub mod release;
pub mod schema;
pub mod schema_subset;
pub mod semver;
pub mod strvals;
pub mod tiller;
pub mod values;
pub mod values_json;

#[cfg(test)]
mod test_support;
