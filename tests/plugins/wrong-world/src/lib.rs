//! Test component exporting a world that is not a Capstan plugin world; the host must
//! refuse to load it with an error naming the file and what was expected.

wit_bindgen::generate!({ world: "greeter", path: "wit" });

struct Greeter;

impl Guest for Greeter {
    fn greet() -> String {
        "hello".into()
    }
}

export!(Greeter);
