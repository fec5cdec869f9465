//! Semantic versions and version constraints exactly as Helm evaluates them through
//! Masterminds/semver v3. The implementation is Sprig's (Helm's templates and Helm itself
//! link the same Masterminds module): see [`capstan_sprig::semver`].

pub use capstan_sprig::semver::{
    Constraints, SemverError, Version, highest_matching, is_compatible_range,
};
