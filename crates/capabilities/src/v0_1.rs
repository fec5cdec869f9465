//! The imports of the previous contract, `capstan:plugin@0.1.x` (N−1): `log`, `git`, `kube`
//! and `crypto` as 0.1 components import them, served on the same views as the current
//! interfaces (their shapes did not change; the records are generated twice).

use wasmtime::component::Resource;

use super::bindings::types::{Error, Json};
use super::crypto::CryptoView;
use super::git::GitView;
use super::kube::KubeView;
use super::log::LogView;
use super::resources::OpenRepository;

wasmtime::component::bindgen!({
    path: "compat-wit/0.1.1",
    inline: "
        package capstan:host-v0-1;

        /// Every interface a `capstan:plugin@0.1.1` plugin may import.
        world capabilities {
            import capstan:plugin/log@0.1.1;
            import capstan:plugin/git@0.1.1;
            import capstan:plugin/kube@0.1.1;
            import capstan:plugin/crypto@0.1.1;
        }
    ",
    imports: { default: async },
    with: {
        "capstan:plugin/types@0.1.1": crate::bindings::types,
        "capstan:plugin/git@0.1.1.repository": crate::resources::OpenRepository,
    },
});

pub use capstan::plugin::{crypto, git, kube, log};

use super::bindings::{git as git02, kube as kube02, log as log02};

impl log::Host for LogView<'_> {
    async fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Trace => log02::Level::Trace,
            log::Level::Debug => log02::Level::Debug,
            log::Level::Info => log02::Level::Info,
            log::Level::Warn => log02::Level::Warn,
            log::Level::Error => log02::Level::Error,
        };
        log02::Host::log(self, level, message).await;
    }
}

impl git::Host for GitView<'_> {
    async fn open(&mut self, url: String) -> Result<Resource<OpenRepository>, Error> {
        git02::Host::open(self, url).await
    }
}

impl git::HostRepository for GitView<'_> {
    async fn resolve(
        &mut self,
        handle: Resource<OpenRepository>,
        reference: String,
    ) -> Result<String, Error> {
        git02::HostRepository::resolve(self, handle, reference).await
    }

    async fn tags(&mut self, handle: Resource<OpenRepository>) -> Result<Vec<git::Tag>, Error> {
        let tags = git02::HostRepository::tags(self, handle).await?;
        Ok(tags
            .into_iter()
            .map(|t| git::Tag {
                name: t.name,
                commit: t.commit,
            })
            .collect())
    }

    async fn tree_id(
        &mut self,
        handle: Resource<OpenRepository>,
        commit: String,
        path: String,
    ) -> Result<String, Error> {
        git02::HostRepository::tree_id(self, handle, commit, path).await
    }

    async fn read_tree(
        &mut self,
        handle: Resource<OpenRepository>,
        commit: String,
        path: String,
    ) -> Result<Vec<git::File>, Error> {
        let files = git02::HostRepository::read_tree(self, handle, commit, path).await?;
        Ok(files
            .into_iter()
            .map(|f| git::File {
                path: f.path,
                executable: f.executable,
                contents: f.contents,
            })
            .collect())
    }

    async fn drop(&mut self, handle: Resource<OpenRepository>) -> wasmtime::Result<()> {
        git02::HostRepository::drop(self, handle).await
    }
}

fn object_ref(object: kube::ObjectRef) -> kube02::ObjectRef {
    kube02::ObjectRef {
        api_version: object.api_version,
        kind: object.kind,
        namespace: object.namespace,
        name: object.name,
    }
}

impl kube::Host for KubeView<'_> {
    async fn get(&mut self, object: kube::ObjectRef) -> Result<Option<Json>, Error> {
        kube02::Host::get(self, object_ref(object)).await
    }

    async fn list(
        &mut self,
        api_version: String,
        kind: String,
        namespace: Option<String>,
        label_selector: Option<String>,
    ) -> Result<Vec<Json>, Error> {
        kube02::Host::list(self, api_version, kind, namespace, label_selector).await
    }

    async fn create(&mut self, object: Json) -> Result<Json, Error> {
        kube02::Host::create(self, object).await
    }

    async fn apply(&mut self, object: Json, force: bool) -> Result<Json, Error> {
        kube02::Host::apply(self, object, force).await
    }

    async fn delete(
        &mut self,
        object: kube::ObjectRef,
        propagation: kube::Propagation,
    ) -> Result<bool, Error> {
        let propagation = match propagation {
            kube::Propagation::Background => kube02::Propagation::Background,
            kube::Propagation::Foreground => kube02::Propagation::Foreground,
            kube::Propagation::Orphan => kube02::Propagation::Orphan,
        };
        kube02::Host::delete(self, object_ref(object), propagation).await
    }

    async fn wait_ready(
        &mut self,
        objects: Vec<kube::ObjectRef>,
        timeout_ms: u32,
    ) -> Result<Vec<kube::Readiness>, Error> {
        let objects = objects.into_iter().map(object_ref).collect();
        let readiness = kube02::Host::wait_ready(self, objects, timeout_ms).await?;
        Ok(readiness
            .into_iter()
            .map(|r| kube::Readiness {
                object: kube::ObjectRef {
                    api_version: r.object.api_version,
                    kind: r.object.kind,
                    namespace: r.object.namespace,
                    name: r.object.name,
                },
                ready: r.ready,
                message: r.message,
            })
            .collect())
    }
}

impl crypto::Host for CryptoView<'_> {
    async fn generate_rsa_key(&mut self, bits: u32) -> Result<Vec<u8>, Error> {
        super::bindings::crypto::Host::generate_rsa_key(self, bits).await
    }
}
