//! One `add_to_linker` for every import a plugin may have: WASI, WASI HTTP and the
//! `capstan:plugin` interfaces of both contracts, each served on a narrow view of the
//! call's state (only what that import needs), projected from the store with `HasData`.

use wasmtime::component::{HasData, Linker};
use wasmtime_wasi_http::{WasiHttp, WasiHttpCtxView};

use super::bindings;
use super::credentials::CredentialsView;
use super::crypto::CryptoView;
use super::folder_files::FolderFilesView;
use super::git::GitView;
use super::kube::KubeView;
use super::log::LogView;
use super::post_render::PostRenderView;
use super::release_context::ReleaseContextView;
use super::state::CallState;
use super::v0_1;

/// Markers naming each view for `add_to_linker`.
struct Log;
impl HasData for Log {
    type Data<'a> = LogView<'a>;
}
struct Kube;
impl HasData for Kube {
    type Data<'a> = KubeView<'a>;
}
struct Git;
impl HasData for Git {
    type Data<'a> = GitView<'a>;
}
struct Credentials;
impl HasData for Credentials {
    type Data<'a> = CredentialsView<'a>;
}
struct Crypto;
impl HasData for Crypto {
    type Data<'a> = CryptoView<'a>;
}
struct FolderFiles;
impl HasData for FolderFiles {
    type Data<'a> = FolderFilesView<'a>;
}
struct PostRender;
impl HasData for PostRender {
    type Data<'a> = PostRenderView<'a>;
}
struct ReleaseContext;
impl HasData for ReleaseContext {
    type Data<'a> = ReleaseContextView<'a>;
}

fn log(state: &mut CallState) -> LogView<'_> {
    LogView {
        plugin: state.plugin(),
    }
}

fn kube(state: &mut CallState) -> KubeView<'_> {
    KubeView {
        grant: state.data().grants.kube.as_ref(),
    }
}

fn git(state: &mut CallState) -> GitView<'_> {
    let parts = state.parts();
    GitView {
        grant: parts.data.grants.git.as_ref(),
        table: parts.table,
    }
}

fn credentials(state: &mut CallState) -> CredentialsView<'_> {
    CredentialsView {
        grant: state.data().grants.credentials.as_ref(),
    }
}

fn crypto(state: &mut CallState) -> CryptoView<'_> {
    let parts = state.parts();
    CryptoView {
        plugin: parts.plugin,
        hashes: &mut parts.data.bcrypt_hashes,
    }
}

fn folder_files(state: &mut CallState) -> FolderFilesView<'_> {
    FolderFilesView {
        plugin: state.plugin(),
        grant: state.data().grants.folder_files.as_ref(),
    }
}

fn post_render(state: &mut CallState) -> PostRenderView<'_> {
    PostRenderView {
        plugin: state.plugin(),
        grant: state.data().grants.post_render.as_ref(),
    }
}

fn release_context(state: &mut CallState) -> ReleaseContextView<'_> {
    ReleaseContextView {
        grant: state.data().grants.release_context.as_ref(),
    }
}

fn http(state: &mut CallState) -> WasiHttpCtxView<'_> {
    let parts = state.parts();
    WasiHttpCtxView {
        ctx: &mut parts.data.http,
        table: parts.table,
        hooks: &mut parts.data.http_hooks,
    }
}

/// Add every import plugins may have to `linker`: WASI preview 2, outgoing WASI HTTP (each
/// request checked against the call's HTTP grant; none: refused), and the `capstan:plugin`
/// interfaces of the current contract and of 0.1.
pub fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    use wasmtime_wasi_http::p2::bindings::{LinkOptions, http as wasi_http};
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    wasi_http::outgoing_handler::add_to_linker::<_, WasiHttp>(linker, http)?;
    wasi_http::types::add_to_linker::<_, WasiHttp>(linker, &LinkOptions::default().into(), http)?;
    bindings::log::add_to_linker::<_, Log>(linker, log)?;
    bindings::kube::add_to_linker::<_, Kube>(linker, kube)?;
    bindings::discovery::add_to_linker::<_, Kube>(linker, kube)?;
    bindings::git::add_to_linker::<_, Git>(linker, git)?;
    bindings::credentials::add_to_linker::<_, Credentials>(linker, credentials)?;
    bindings::crypto::add_to_linker::<_, Crypto>(linker, crypto)?;
    bindings::folder_files::add_to_linker::<_, FolderFiles>(linker, folder_files)?;
    bindings::post_render::add_to_linker::<_, PostRender>(linker, post_render)?;
    bindings::release_context::add_to_linker::<_, ReleaseContext>(linker, release_context)?;
    v0_1::log::add_to_linker::<_, Log>(linker, log)?;
    v0_1::git::add_to_linker::<_, Git>(linker, git)?;
    v0_1::kube::add_to_linker::<_, Kube>(linker, kube)?;
    v0_1::crypto::add_to_linker::<_, Crypto>(linker, crypto)?;
    Ok(())
}
