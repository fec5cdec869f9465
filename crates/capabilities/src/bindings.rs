//! Host-side bindings of the `capstan:plugin` interfaces plugins import (`wit/` at the
//! repository root), generated here where they are implemented. The plugin worlds'
//! bindings reuse them (`with:`), as embedders reuse `wasmtime-wasi`'s.

wasmtime::component::bindgen!({
    path: "../../wit",
    inline: "
        package capstan:host;

        /// Every interface a Capstan plugin of any world may import.
        world capabilities {
            import capstan:plugin/log@0.2.0;
            import capstan:plugin/git@0.2.0;
            import capstan:plugin/credentials@0.2.0;
            import capstan:plugin/kube@0.2.0;
            import capstan:plugin/discovery@0.2.0;
            import capstan:plugin/post-render@0.2.0;
            import capstan:plugin/release-context@0.2.0;
            import capstan:plugin/crypto@0.2.0;
            import capstan:plugin/folder-files@0.2.0;
        }
    ",
    imports: { default: async },
    with: {
        "capstan:plugin/git.repository": crate::resources::OpenRepository,
    },
});

pub use capstan::plugin::{
    credentials, crypto, discovery, folder_files, git, kube, log, post_render, release_context,
    types,
};
