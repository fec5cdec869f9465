//! Hostile charts end with a clear error, quickly and in bounded memory: endless `include`
//! and `tpl` recursion, templates that would write gigabytes, an archive inflating to 1 GiB,
//! and archive paths escaping the chart. Elapsed times are printed (no timing asserts: the
//! machine is shared); the bound on memory is that each case stops at a fixed limit rather
//! than after building its output.

use std::io::Read;
use std::time::Instant;

use capstan_gotmpl::value::Value;
use capstan_helm::chart::File;
use capstan_helm::engine::{RenderOptions, render, render_values};

fn render_template(template: &str, values: &str) -> Result<String, String> {
    let chart = capstan_helm::load::load_files(vec![
        File::new("Chart.yaml", "apiVersion: v2\nname: evil\nversion: 0.1.0\n"),
        File::new("values.yaml", values),
        File::new("templates/t.yaml", template),
    ])
    .map_err(|e| e.to_string())?;
    let options = RenderOptions::default();
    let values = capstan_helm::values::coalesce_values(&chart, &Value::new_map())
        .map_err(|e| e.to_string())?;
    let top = render_values(&chart, &values, &options);
    render(&chart, &top, &options)
        .map(|mut files| files.remove("evil/templates/t.yaml").unwrap_or_default())
        .map_err(|e| e.to_string())
}

/// Run on a thread with a generous stack, as the engine's callers do, and time it.
fn timed(name: &str, work: impl FnOnce() -> Result<String, String> + Send + 'static) -> String {
    let started = Instant::now();
    let result = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(work)
        .unwrap()
        .join()
        .unwrap();
    let error = result.expect_err("a hostile chart must fail");
    println!("{name}: failed after {:?}: {error}", started.elapsed());
    error
}

#[test]
fn endless_include_recursion_stops_at_the_depth_limit() {
    let error = timed("include recursion", || {
        render_template(
            r#"{{- define "loop" }}{{ include "loop" . }}{{ end }}{{ include "loop" . }}"#,
            "",
        )
    });
    assert!(error.contains("exceeded maximum template depth"), "{error}");
    assert!(error.contains("evil/templates/t.yaml"), "{error}");
}

#[test]
fn endless_tpl_recursion_stops_at_the_depth_limit() {
    let error = timed("tpl recursion", || {
        render_template("{{ tpl .Values.t . }}", "t: '{{ tpl .Values.t . }}'\n")
    });
    assert!(error.contains("exceeded maximum template depth"), "{error}");
}

#[test]
fn a_template_writing_gigabytes_stops_at_the_output_limit() {
    let error = timed("1e8 bytes of output", || {
        render_template("{{ range 10000000 }}xxxxxxxxxx{{ end }}", "")
    });
    assert!(error.contains("output size limit"), "{error}");
    // A loop too long to finish is refused before it starts.
    let error = timed("1e12 iterations", || {
        render_template("{{ range 1000000000000 }}x{{ end }}", "")
    });
    assert!(error.contains("execution step limit"), "{error}");
    // Doubling through nested includes: 2^40 bytes if nothing stopped it.
    let mut template = String::from(r#"{{- define "l0" }}xxxxxxxxxxxxxxxx{{ end }}"#);
    for level in 1..=40 {
        let below = level - 1;
        template.push_str(&format!(
            r#"{{{{- define "l{level}" }}}}{{{{ include "l{below}" . }}}}{{{{ include "l{below}" . }}}}{{{{ end }}}}"#
        ));
    }
    template.push_str(r#"{{ include "l40" . }}"#);
    let error = timed("include doubling", move || render_template(&template, ""));
    assert!(error.contains("output size limit"), "{error}");
    let error = timed("repeat 2^40", || {
        render_template(r#"{{ repeat 1099511627776 "x" }}"#, "")
    });
    assert!(error.contains("exceeds the 64 MiB limit"), "{error}");
}

/// A gzip stream of a tar holding one file of `size` zero bytes, built without holding the
/// inflated data in memory.
fn zero_bomb(size: u64) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::best(),
    ));
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_path("evil/templates/zeros.yaml").unwrap();
    header.set_cksum();
    builder
        .append(&header, std::io::repeat(0).take(size))
        .unwrap();
    builder.into_inner().unwrap().finish().unwrap()
}

#[test]
fn an_archive_inflating_to_a_gigabyte_is_refused_early() {
    let bomb = zero_bomb(1 << 30);
    println!("bomb: {} compressed bytes inflate to 1 GiB", bomb.len());
    let error = timed("1 GiB zip bomb", move || {
        capstan_helm::load::load_archive(&bomb)
            .map(|_| String::new())
            .map_err(|e| e.to_string())
    });
    // The tar header's size already exceeds the limits: nothing is inflated.
    assert!(error.contains("larger than the maximum"), "{error}");
}

#[test]
fn many_small_files_inflating_past_the_total_limit_are_refused() {
    // 40 files of 4 MiB: each under the per-file limit, 160 MiB together.
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::best(),
    ));
    for i in 0..40 {
        let mut header = tar::Header::new_gnu();
        header.set_size(4 << 20);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_path(format!("evil/files/{i}.bin")).unwrap();
        header.set_cksum();
        builder
            .append(&header, std::io::repeat(0).take(4 << 20))
            .unwrap();
    }
    let bomb = builder.into_inner().unwrap().finish().unwrap();
    let error = timed("160 MiB in small files", move || {
        capstan_helm::load::load_archive(&bomb)
            .map(|_| String::new())
            .map_err(|e| e.to_string())
    });
    assert!(error.contains("larger than the maximum size"), "{error}");
}

#[test]
fn archive_paths_escaping_the_chart_are_refused() {
    for (path, expected) in [
        (
            "evil/../../etc/passwd",
            "chart illegally references parent directory",
        ),
        ("//etc/passwd", "chart illegally contains absolute paths"),
    ] {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        let mut header = tar::Header::new_gnu();
        header.set_size(4);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        let bytes = path.as_bytes();
        header.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
        header.set_cksum();
        builder.append(&header, &b"evil"[..]).unwrap();
        let archive = builder.into_inner().unwrap().finish().unwrap();
        let error = capstan_helm::load::load_archive(&archive)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains(expected), "{path}: {error}");
    }
}
