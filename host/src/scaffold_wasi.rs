//! The WASI 0.2 WIT a Python source plugin binds to besides the Capstan contract
//! (`wasi:http/outgoing-handler` and what it uses), written by `capstan plugin new --lang
//! python` into `wit/deps/`. The files are those of `plugins/examples/python-url-source`.

/// `(path under wit/deps, text)` of each WASI WIT file.
pub const WASI_WIT: &[(&str, &str)] = &[
    (
        "wasi-cli/cli.wit",
        include_str!("../../plugins/examples/python-url-source/wit/deps/wasi-cli/cli.wit"),
    ),
    (
        "wasi-clocks/clocks.wit",
        include_str!("../../plugins/examples/python-url-source/wit/deps/wasi-clocks/clocks.wit"),
    ),
    (
        "wasi-filesystem/filesystem.wit",
        include_str!(
            "../../plugins/examples/python-url-source/wit/deps/wasi-filesystem/filesystem.wit"
        ),
    ),
    (
        "wasi-http/http.wit",
        include_str!("../../plugins/examples/python-url-source/wit/deps/wasi-http/http.wit"),
    ),
    (
        "wasi-io/io.wit",
        include_str!("../../plugins/examples/python-url-source/wit/deps/wasi-io/io.wit"),
    ),
    (
        "wasi-random/random.wit",
        include_str!("../../plugins/examples/python-url-source/wit/deps/wasi-random/random.wit"),
    ),
    (
        "wasi-sockets/sockets.wit",
        include_str!("../../plugins/examples/python-url-source/wit/deps/wasi-sockets/sockets.wit"),
    ),
];
