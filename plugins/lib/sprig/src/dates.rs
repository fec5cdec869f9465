//! placeholder
pub fn register(_funcs: &mut capstan_gotmpl::funcs::FuncMap) {}
