//! Rough timing: parse a YAML file and print it back with `to_yaml`, N times.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: bench FILE [N]");
        return;
    };
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let start = std::time::Instant::now();
    let mut v = capstan_gotmpl::value::Value::Nil;
    for _ in 0..n {
        v = capstan_goyaml::from_yaml(&text).unwrap_or_default();
    }
    let parse = start.elapsed() / n as u32;
    let start = std::time::Instant::now();
    let mut len = 0;
    for _ in 0..n {
        len = capstan_goyaml::to_yaml(&v).map(|s| s.len()).unwrap_or(0);
    }
    let emit = start.elapsed() / n as u32;
    parts(&v);
    scan_only(&capstan_goyaml::jsonstep::to_json_text(&v, 512).unwrap_or_default());
    println!(
        "{} bytes: from_yaml {parse:?}, to_yaml {emit:?} ({len} bytes out)",
        text.len()
    );
}

#[allow(dead_code)]
fn parts(v: &capstan_gotmpl::value::Value) {
    let t = std::time::Instant::now();
    let json = capstan_goyaml::jsonstep::to_json_text(v, 512).unwrap_or_default();
    let a = t.elapsed();
    let t = std::time::Instant::now();
    let tree = capstan_goyaml::jsonstep::to_yaml_tree(v, 512);
    let b = t.elapsed();
    let t = std::time::Instant::now();
    if let Ok(mut tree) = tree {
        capstan_goyaml::emit::sort_keys(&mut tree, capstan_goyaml::emit::Flavor::V2);
        let c = t.elapsed();
        let t = std::time::Instant::now();
        let _ =
            capstan_goyaml::emit::marshal(&tree, capstan_goyaml::emit::Flavor::V2, 1 << 30, 600);
        println!(
            "json {a:?} ({} bytes), json+parse {b:?}, sort {c:?}, emit {:?}",
            json.len(),
            t.elapsed()
        );
    }
}

#[allow(dead_code)]
fn scan_only(text: &str) {
    let t = std::time::Instant::now();
    let mut p = capstan_goyaml::parser::Parser::new(text);
    let mut n = 0;
    while let Ok(Some(_)) = p.next_event() {
        n += 1;
    }
    let a = t.elapsed();
    let t = std::time::Instant::now();
    let mut c = capstan_goyaml::compose::Composer::new(text);
    let doc = c.next_document();
    let b = t.elapsed();
    let t = std::time::Instant::now();
    if let Ok(Some(d)) = doc {
        let _ = capstan_goyaml::decode::decode_document(&d);
    }
    println!(
        "events {n} in {a:?}, compose {b:?}, decode {:?}",
        t.elapsed()
    );
}
