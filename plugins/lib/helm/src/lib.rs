//! Helm's rendering pipeline in Rust: chart loading (directories and archives), values
//! coalescing, dependencies, the template engine with Helm's functions and built-in
//! objects, and output assembly as `helm template` prints it.
