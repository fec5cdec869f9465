//! YAML the way Helm reads and writes it: parsing with go-yaml v2's YAML 1.1 scalar
//! resolution into [`capstan_gotmpl::value::Value`], and an emitter whose output is
//! byte-identical to go-yaml v2's `Marshal` (what `toYaml` prints).
