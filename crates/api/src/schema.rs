//! Schema helpers of the generated CRD.

/// An object of any fields: the API server keeps what it is given (chart values, a plugin
/// source's spec).
pub(crate) fn free_form_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}
