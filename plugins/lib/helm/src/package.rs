//! Packaging a chart folder into a chart archive (what `helm package` writes) (gzipped tar, every file under a folder
//! named after the chart, as `helm package` lays it out, `.helmignore` applied). Deterministic: fixed modes and
//! times, files in path order, so the same tree always gives the same digest.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::ignore;

/// Largest archive this component produces.
pub const MAX_ARCHIVE_BYTES: usize = 32 << 20;

/// One file of the chart folder.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path relative to the chart folder.
    pub path: String,
    /// Executable bit.
    pub executable: bool,
    /// Contents.
    pub contents: Vec<u8>,
}

/// The fields of Chart.yaml a package needs.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChartFile {
    name: Option<String>,
    version: Option<serde_yaml_ng::Value>,
    app_version: Option<serde_yaml_ng::Value>,
}

/// A packaged chart.
#[derive(Debug, Clone)]
pub struct Packaged {
    /// The gzipped tar archive.
    pub archive: Vec<u8>,
    /// Chart name.
    pub name: String,
    /// Chart version.
    pub version: String,
    /// App version, when the chart declares one.
    pub app_version: Option<String>,
}

impl Packaged {
    /// `sha256:<hex>` of the archive.
    pub fn digest(&self) -> String {
        format!("sha256:{}", hex::encode(Sha256::digest(&self.archive)))
    }
}

/// Package a chart folder on disk (regular files only; symlinks are followed when they stay
/// inside the folder, as `helm package` does, and refused otherwise).
pub fn package_dir(dir: &std::path::Path) -> Result<Packaged, String> {
    let root = dir
        .canonicalize()
        .map_err(|e| format!("cannot open chart folder {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    collect_files(&root, &root, &mut files)?;
    package_with(&files, Compression::fast())
}

fn collect_files(
    root: &std::path::Path,
    dir: &std::path::Path,
    out: &mut Vec<SourceFile>,
) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let path = entry.path();
        let real = path
            .canonicalize()
            .map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
        if !real.starts_with(root) {
            return Err(format!(
                "{} points outside the chart folder",
                path.display()
            ));
        }
        let relative = path
            .strip_prefix(root)
            .map_err(|_| format!("{} is outside the chart folder", path.display()))?
            .to_string_lossy()
            .replace('\\', "/");
        if real.is_dir() {
            collect_files(root, &path, out)?;
        } else {
            let contents =
                std::fs::read(&real).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            #[cfg(unix)]
            let executable = {
                use std::os::unix::fs::PermissionsExt;
                std::fs::metadata(&real).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
            };
            #[cfg(not(unix))]
            let executable = false;
            out.push(SourceFile {
                path: relative,
                executable,
                contents,
            });
        }
    }
    Ok(())
}

fn scalar(value: &serde_yaml_ng::Value) -> Option<String> {
    match value {
        serde_yaml_ng::Value::String(s) => Some(s.clone()),
        serde_yaml_ng::Value::Number(n) => Some(n.to_string()),
        serde_yaml_ng::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Package `files` (the chart folder's content).
pub fn package(files: &[SourceFile]) -> Result<Packaged, String> {
    package_with(files, Compression::default())
}

/// [`package`] with a chosen gzip level: `capstan template` packs a local folder only to hand
/// it to the next call in the same process, so it stores the files uncompressed.
pub fn package_with(files: &[SourceFile], compression: Compression) -> Result<Packaged, String> {
    let selected = select(files)?;
    let sorted: Vec<&SourceFile> = selected.order.iter().map(|&i| &files[i]).collect();
    let name = selected.name;
    let archive = if compression == Compression::none() {
        gzip_stored(&write_tar(Vec::new(), &name, &sorted)?)
    } else {
        // Compressed as the tar is written: no second copy of the whole chart.
        write_tar(GzEncoder::new(Vec::new(), compression), &name, &sorted)?
            .finish()
            .map_err(|e| format!("cannot compress the archive: {e}"))?
    };
    Ok(Packaged {
        archive,
        name,
        version: selected.version,
        app_version: selected.app_version,
    })
}

/// The chart that [`package`] of `files` and then [`crate::load::load_archive`] would
/// give, without writing, compressing and reading back the archive (`capstan template` of a
/// folder: the archive was a quarter of the run on charts of a few MB).
pub fn load_folder(files: Vec<SourceFile>) -> Result<crate::chart::Chart, String> {
    load_folder_in_part(files, Vec::new(), std::sync::Arc::new(AllRead))
}

/// The reader of a folder passed whole: there is nothing left to read.
struct AllRead;

impl crate::chart::FileReader for AllRead {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        Err(format!("{path} was not passed unread"))
    }
}

/// [`load_folder`] of a folder whose files are given in part: `read` with their contents,
/// `unread` as paths and sizes, read through `reader` only when needed (the ignore rules
/// and Chart.yaml at once; metadata, values, templates and subchart archives while
/// loading; other files when a template asks for them, see [`crate::chart::Unread`]).
pub fn load_folder_in_part(
    read: Vec<SourceFile>,
    unread: Vec<(String, u64)>,
    reader: std::sync::Arc<dyn crate::chart::FileReader>,
) -> Result<crate::chart::Chart, String> {
    let mut files = read;
    let mut sizes: Vec<Option<u64>> = vec![None; files.len()];
    for (path, size) in unread {
        // What the folder holds depends on these two: read them first.
        let (contents, listed) = if path == IGNORE_FILE || path == "Chart.yaml" {
            (
                reader
                    .read(&path)
                    .map_err(|e| format!("cannot read {path}: {e}"))?,
                None,
            )
        } else {
            (Vec::new(), Some(size))
        };
        files.push(SourceFile {
            path,
            executable: false,
            contents,
        });
        sizes.push(listed);
    }
    let selected = select(&files)?;
    let members: Vec<(String, crate::load::Member)> = selected
        .order
        .iter()
        .map(|&i| {
            let file = &mut files[i];
            let name = format!("{}/{}", selected.name, file.path);
            let member = match sizes[i] {
                Some(size) => crate::load::Member::Unread(crate::chart::Unread::new(
                    file.path.clone(),
                    size,
                    std::sync::Arc::clone(&reader),
                )),
                None => crate::load::Member::Read(std::mem::take(&mut file.contents)),
            };
            (name, member)
        })
        .collect();
    let total: u64 = members.iter().map(|(_, member)| member.size()).sum();
    if total > MAX_ARCHIVE_BYTES as u64 {
        return Err(too_large());
    }
    crate::load::load_members_in_part(members).map_err(|e| e.to_string())
}

/// The file at a chart folder's root that holds its ignore rules.
pub const IGNORE_FILE: &str = ".helmignore";

/// Which of a folder's file `paths` (relative, `/`-separated) `.helmignore` keeps, given the
/// file's contents (`None` when the folder has none): ascending indexes into `paths`, the
/// files [`package`] and [`load_folder`] would read. Lets a caller read only those (Helm's
/// loader skips ignored files before reading them).
pub fn kept_files(paths: &[&str], helmignore: Option<&[u8]>) -> Result<Vec<usize>, String> {
    let rules = ignore::Rules::parse(&String::from_utf8_lossy(helmignore.unwrap_or_default()))?;
    let indexes: Vec<usize> = (0..paths.len()).collect();
    Ok(rules
        .kept(&indexes, |&i| paths[i])
        .into_iter()
        .copied()
        .collect())
}

/// What a package of the folder holds: the files kept by `.helmignore` (indices into the
/// folder's files, in path order) and the chart's name and versions.
struct Selected {
    order: Vec<usize>,
    name: String,
    version: String,
    app_version: Option<String>,
}

/// Apply `.helmignore` to `files` and read the name and versions from `Chart.yaml`, as
/// `helm package` does before writing anything.
fn select(files: &[SourceFile]) -> Result<Selected, String> {
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let helmignore = files
        .iter()
        .find(|f| f.path == IGNORE_FILE)
        .map(|f| f.contents.as_slice());
    let mut order = kept_files(&paths, helmignore)?;
    let chart_yaml = order
        .iter()
        .map(|&i| &files[i])
        .find(|f| f.path == "Chart.yaml")
        .ok_or_else(|| {
            if files.iter().any(|f| f.path == "Chart.yaml") {
                "Chart.yaml is excluded by .helmignore".to_owned()
            } else {
                "no Chart.yaml in the chart folder".to_owned()
            }
        })?;
    let text = std::str::from_utf8(&chart_yaml.contents)
        .map_err(|_| "Chart.yaml is not UTF-8".to_owned())?;
    let chart: ChartFile = serde_yaml_ng::from_str(text).map_err(|e| format!("Chart.yaml: {e}"))?;
    let name = chart
        .name
        .filter(|n| !n.is_empty())
        .ok_or_else(|| "Chart.yaml: field `name` is missing".to_owned())?;
    if name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(format!(
            "Chart.yaml: chart name `{name}` is not a valid folder name"
        ));
    }
    let version = chart
        .version
        .as_ref()
        .and_then(scalar)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| "Chart.yaml: field `version` is missing".to_owned())?;
    let app_version = chart.app_version.as_ref().and_then(scalar);
    order.sort_by(|&a, &b| files[a].path.cmp(&files[b].path));
    Ok(Selected {
        order,
        name,
        version,
        app_version,
    })
}

fn too_large() -> String {
    format!(
        "chart folder holds more than {} MiB",
        MAX_ARCHIVE_BYTES >> 20
    )
}

/// The tar archive of `files` under the folder `name`, written into `out` (deterministic:
/// files in the given order, mode 644/755, no modification time).
fn write_tar<W: Write>(out: W, name: &str, files: &[&SourceFile]) -> Result<W, String> {
    let mut builder = tar::Builder::new(out);
    let mut total = 0usize;
    for file in files {
        total += file.contents.len();
        if total > MAX_ARCHIVE_BYTES {
            return Err(too_large());
        }
        let mut header = tar::Header::new_ustar();
        header.set_size(file.contents.len() as u64);
        header.set_mode(if file.executable { 0o755 } else { 0o644 });
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        let path = format!("{name}/{}", file.path);
        builder
            .append_data(&mut header, &path, file.contents.as_slice())
            .map_err(|e| format!("cannot add {path} to the archive: {e}"))?;
    }
    builder
        .into_inner()
        .map_err(|e| format!("cannot finish the archive: {e}"))
}

/// `data` as one gzip member of stored (uncompressed) deflate blocks: what a chart packed
/// only to be read again in the same process needs. Written here because miniz_oxide's
/// level 0 still runs its block machinery over the input (measured in a component: slower
/// than level 1 on a 1.6 MB chart, where this is a copy and a CRC).
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    const MAX_STORED_BLOCK: usize = 0xffff;
    let mut out = Vec::with_capacity(data.len() + data.len() / MAX_STORED_BLOCK * 5 + 32);
    // Magic, method deflate, no flags, no modification time, no extra flags, unknown OS.
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
    let mut blocks = data.chunks(MAX_STORED_BLOCK).peekable();
    if data.is_empty() {
        // One final, empty stored block.
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        // BFINAL on the last block, BTYPE 00 (stored); the header byte keeps the stream
        // byte-aligned, so LEN and its complement follow directly.
        out.push(u8::from(blocks.peek().is_none()));
        let len = u16::try_from(block.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    let mut crc = flate2::Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    // ISIZE is the input length modulo 2^32.
    // (`as` truncates to exactly that on 64-bit hosts; on wasm32 `usize` is 32 bits.)
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn file(path: &str, contents: &str) -> SourceFile {
        SourceFile {
            path: path.into(),
            executable: false,
            contents: contents.as_bytes().to_vec(),
        }
    }

    #[test]
    fn stored_gzip_reads_back_at_every_block_boundary() {
        for size in [0usize, 1, 0xfffe, 0xffff, 0x10000, 200_003] {
            let data: Vec<u8> = (0..size).map(|i| (i * 7 + i / 300) as u8).collect();
            let packed = gzip_stored(&data);
            let mut back = Vec::new();
            flate2::read::GzDecoder::new(packed.as_slice())
                .read_to_end(&mut back)
                .unwrap_or_else(|e| panic!("size {size}: {e}"));
            assert_eq!(back, data, "size {size}");
        }
    }

    #[test]
    fn an_uncompressed_package_loads_like_a_compressed_one() {
        let files = vec![
            file("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 1.2.3\n"),
            file("templates/cm.yaml", &"kind: ConfigMap\n".repeat(10_000)),
        ];
        let stored = package_with(&files, Compression::none()).unwrap();
        let fast = package_with(&files, Compression::fast()).unwrap();
        assert!(stored.archive.len() > fast.archive.len());
        let a = crate::load::load_archive(&stored.archive).unwrap();
        let b = crate::load::load_archive(&fast.archive).unwrap();
        assert_eq!(a.templates.len(), 1);
        assert_eq!(a.templates[0].data, b.templates[0].data);
    }

    #[test]
    fn packages_under_the_chart_name_deterministically() {
        let files = vec![
            file("templates/cm.yaml", "kind: ConfigMap\n"),
            file(
                "Chart.yaml",
                "apiVersion: v2\nname: demo\nversion: 1.2.3\nappVersion: 1.0\n",
            ),
        ];
        let first = package(&files).unwrap();
        let second = package(&files.into_iter().rev().collect::<Vec<_>>()).unwrap();
        assert_eq!(first.digest(), second.digest());
        assert_eq!(first.name, "demo");
        assert_eq!(first.version, "1.2.3");
        assert_eq!(first.app_version.as_deref(), Some("1.0"));

        let mut names = Vec::new();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(first.archive.as_slice()));
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let mut body = String::new();
            entry.read_to_string(&mut body).unwrap();
            names.push(entry.path().unwrap().display().to_string());
        }
        assert_eq!(names, ["demo/Chart.yaml", "demo/templates/cm.yaml"]);
    }

    #[test]
    fn kept_files_are_the_files_a_package_holds() {
        let paths = [
            ".helmignore",
            "Chart.yaml",
            "README.md",
            "ci/values.yaml",
            "files/crds/full/a.yaml",
            "files/crds/minimal/a.yaml",
            "templates/.hidden.yaml",
            "templates/cm.yaml",
        ];
        let rules = b"*.md\nci/\nfiles/crds/full/*.yaml\n";
        let kept = kept_files(&paths, Some(rules)).unwrap();
        let kept: Vec<&str> = kept.iter().map(|&i| paths[i]).collect();
        assert_eq!(
            kept,
            [
                ".helmignore",
                "Chart.yaml",
                "files/crds/minimal/a.yaml",
                "templates/cm.yaml"
            ]
        );
        // The same files as packaging keeps.
        let files: Vec<SourceFile> = paths
            .iter()
            .map(|p| match *p {
                ".helmignore" => file(p, std::str::from_utf8(rules).unwrap()),
                "Chart.yaml" => file(p, "apiVersion: v2\nname: demo\nversion: 1.0.0\n"),
                _ => file(p, "x: 1\n"),
            })
            .collect();
        let packaged: Vec<&str> = select(&files)
            .unwrap()
            .order
            .iter()
            .map(|&i| files[i].path.as_str())
            .collect();
        assert_eq!(packaged, kept);
        // Without a .helmignore only the default rule applies; a broken one is refused.
        assert_eq!(kept_files(&paths, None).unwrap().len(), paths.len() - 1);
        assert!(
            kept_files(&paths, Some(b"**/x\n"))
                .unwrap_err()
                .contains("line 1")
        );
    }

    #[test]
    fn helmignore_is_applied() {
        let files = vec![
            file("Chart.yaml", "name: demo\nversion: 1.0.0\n"),
            file(".helmignore", "*.md\nci/\n"),
            file("README.md", "x"),
            file("ci/test-values.yaml", "x"),
            file("templates/.swp", "x"),
            file("templates/cm.yaml", "x"),
        ];
        let artifact = package(&files).unwrap();
        let mut archive =
            tar::Archive::new(flate2::read::GzDecoder::new(artifact.archive.as_slice()));
        let names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "demo/.helmignore",
                "demo/Chart.yaml",
                "demo/templates/cm.yaml"
            ]
        );
        let broken = vec![
            file("Chart.yaml", "name: d\nversion: 1\n"),
            file(".helmignore", "**/x\n"),
        ];
        assert_eq!(
            package(&broken).err().unwrap(),
            ".helmignore line 1: `**` is not supported"
        );
        let hidden = vec![
            file("Chart.yaml", "name: d\nversion: 1\n"),
            file(".helmignore", "!README.md\n"),
        ];
        assert_eq!(
            package(&hidden).err().unwrap(),
            "Chart.yaml is excluded by .helmignore"
        );
    }

    #[test]
    fn a_folder_without_a_valid_chart_yaml_is_refused() {
        assert_eq!(
            package(&[file("values.yaml", "")]).err().unwrap(),
            "no Chart.yaml in the chart folder"
        );
        assert_eq!(
            package(&[file("Chart.yaml", "version: 1.0.0\n")])
                .err()
                .unwrap(),
            "Chart.yaml: field `name` is missing"
        );
        assert!(
            package(&[file("Chart.yaml", "name: [\n")])
                .err()
                .unwrap()
                .starts_with("Chart.yaml: ")
        );
        assert_eq!(
            package(&[file("Chart.yaml", "name: ../x\nversion: 1\n")])
                .err()
                .unwrap(),
            "Chart.yaml: chart name `../x` is not a valid folder name"
        );
    }

    #[allow(dead_code)]
    mod xorshift {
        include!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../test-support/xorshift.rs"
        ));
    }
    use xorshift::Rng;

    /// `capstan template` passes a folder's files over this many bytes unread
    /// (`READ_AHEAD_FILE_BYTES` in the host).
    const READ_AHEAD_FILE_BYTES: usize = 64 << 10;

    /// A size around the read-ahead limit, or small, or well beyond it.
    fn size(rng: &mut Rng) -> usize {
        match rng.below(4) {
            0 => rng.pick(&[
                READ_AHEAD_FILE_BYTES - 1,
                READ_AHEAD_FILE_BYTES,
                READ_AHEAD_FILE_BYTES + 1,
                READ_AHEAD_FILE_BYTES + 3,
            ]),
            1 => rng.below(200),
            2 => READ_AHEAD_FILE_BYTES - 64 + rng.below(128),
            _ => rng.below(3 * READ_AHEAD_FILE_BYTES),
        }
    }

    /// `n` bytes of text lines (a byte-order mark first now and then, a character beyond
    /// ASCII cut in two at the end now and then), or of anything.
    fn contents(rng: &mut Rng, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 16);
        match rng.below(6) {
            0 => out.extend((0..n).map(|_| rng.next() as u8)),
            kind => {
                if kind == 1 {
                    out.extend_from_slice("\u{feff}".as_bytes());
                }
                let mut line = 0;
                while out.len() < n {
                    let text = match rng.below(4) {
                        0 => format!("line {line}: caf\u{e9}\r\n"),
                        _ => format!("line {line} {}\n", "x".repeat(rng.below(90))),
                    };
                    out.extend_from_slice(text.as_bytes());
                    line += 1;
                }
                out.truncate(n);
            }
        }
        out
    }

    /// `.Files` calls on `paths` (some of which the chart has not) as YAML lines: each
    /// method of `.Files`, `Glob` patterns with `AsConfig`/`AsSecrets`, ranging, `len` of
    /// all the files, and their `%v` text.
    fn files_lines(rng: &mut Rng, paths: &[String]) -> String {
        const GLOBS: &[&str] = &[
            "files/*",
            "**.txt",
            "*.md",
            "crds/*",
            "ignored/**",
            "{files,crds}/*",
            "**",
            "*.bak",
        ];
        let mut text = String::new();
        for k in 0..1 + rng.below(8) {
            let path = if rng.chance(10) {
                "files/missing.txt".to_owned()
            } else {
                paths[rng.below(paths.len())].clone()
            };
            let glob = rng.pick(GLOBS);
            let line = match rng.below(11) {
                0 | 1 => format!("  get{k}: {{{{ .Files.Get {path:?} | sha256sum }}}}"),
                2 => format!("  bytes{k}: {{{{ .Files.GetBytes {path:?} | len }}}}"),
                3 => format!("  lines{k}: {{{{ .Files.Lines {path:?} | len }}}}"),
                4 => format!("  first{k}: {{{{ .Files.Lines {path:?} | first | quote }}}}"),
                5 => format!("  glob{k}: {{{{ .Files.Glob {glob:?} | len }}}}"),
                6 => format!("  config{k}: {{{{ (.Files.Glob {glob:?}).AsConfig | sha256sum }}}}"),
                7 => {
                    format!("  secrets{k}: {{{{ (.Files.Glob {glob:?}).AsSecrets | sha256sum }}}}")
                }
                8 => format!(
                    "  range{k}: \"{{{{ range $path, $_ := .Files.Glob {glob:?} }}}}{{{{ $path }}}},{{{{ end }}}}\""
                ),
                10 if rng.chance(25) => {
                    format!("  printed{k}: {{{{ printf \"%v\" .Files | sha256sum }}}}")
                }
                _ => format!("  count{k}: {{{{ len .Files }}}}"),
            };
            text.push_str(&line);
            text.push('\n');
        }
        text
    }

    /// A generated chart folder (under `prefix`, a subchart's folder when not empty): its
    /// Chart.yaml, values, sometimes a schema and `.helmignore`, files of sizes around the
    /// read-ahead limit (text, binary, with a byte-order mark; READMEs, CRDs, ignored
    /// ones), templates that read them through `.Files`, sometimes NOTES.txt, a subchart
    /// folder and a subchart archive.
    fn chart_folder(rng: &mut Rng, name: &str, prefix: &str, depth: usize) -> Vec<SourceFile> {
        let mut files = Vec::new();
        let mut add = |path: String, contents: Vec<u8>| {
            files.push(SourceFile {
                path: format!("{prefix}{path}"),
                executable: false,
                contents,
            });
        };
        let mut chart_yaml = format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n");
        if rng.chance(5) {
            chart_yaml.push_str(&format!("# {}\n", "padding ".repeat(9000)));
        }
        add("Chart.yaml".into(), chart_yaml.into_bytes());
        let mut values = String::from("greeting: hello\nsub: {}\n");
        if rng.chance(30) {
            for k in 0..rng.below(3000) {
                values.push_str(&format!("key{k}: value {k} {}\n", "v".repeat(k % 40)));
            }
        }
        if rng.chance(3) {
            values.push_str("broken: [\n");
        }
        add("values.yaml".into(), values.into_bytes());
        if rng.chance(20) {
            let mut schema = String::from(
                r#"{"type": "object", "properties": {"greeting": {"type": "string"}}"#,
            );
            if rng.chance(30) {
                schema.push_str(r#", "required": ["absent"]"#);
            }
            if rng.chance(40) {
                schema.push_str(&format!(r#", "description": "{}""#, "d".repeat(70_000)));
            }
            schema.push('}');
            add("values.schema.json".into(), schema.into_bytes());
        }
        if rng.chance(50) {
            let mut rules = String::new();
            for pattern in ["*.bak", "ignored/", "README.md", "files/skip*"] {
                if rng.chance(50) {
                    rules.push_str(pattern);
                    rules.push('\n');
                }
            }
            if rng.chance(5) {
                rules.push_str(&format!("# {}\n", "x".repeat(70_000)));
            }
            add(IGNORE_FILE.into(), rules.into_bytes());
        }
        let mut paths: Vec<String> = Vec::new();
        const NAMES: &[&str] = &[
            "files/a.txt",
            "files/b.txt",
            "files/skip-me.txt",
            "files/data.bin",
            "README.md",
            "crds/crd.yaml",
            "ignored/big.txt",
            "old.bak",
            "files/deep/c.txt",
        ];
        for _ in 0..1 + rng.below(6) {
            let path = rng.pick(NAMES).to_owned();
            if paths.contains(&path) {
                continue;
            }
            let n = size(rng);
            add(path.clone(), contents(rng, n));
            paths.push(path);
        }
        paths.push("files/missing.txt".into());
        for t in 0..1 + rng.below(3) {
            let mut text = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-cm{t}\ndata:\n  greeting: {{{{ .Values.greeting | quote }}}}\n"
            );
            text.push_str(&files_lines(rng, &paths));
            if rng.chance(5) {
                // A template the loader must read although it is over the limit.
                text.push_str(&format!("{{{{/* {} */}}}}\n", "c".repeat(70_000)));
            }
            add(format!("templates/cm{t}.yaml"), text.into_bytes());
        }
        if rng.chance(30) {
            let notes = format!(
                "Notes: {{{{ .Files.Get {:?} | len }}}}\n",
                paths[rng.below(paths.len())]
            );
            add("templates/NOTES.txt".into(), notes.into_bytes());
        }
        if depth == 0 && rng.chance(30) {
            files.extend(chart_folder(rng, "sub", "charts/sub/", depth + 1));
        }
        if depth == 0 && rng.chance(20) {
            let mut inner = chart_folder(rng, "arch", "", depth + 1);
            if rng.chance(50) {
                // Incompressible: the archive is over the limit too.
                inner.push(SourceFile {
                    path: "files/noise.bin".into(),
                    executable: false,
                    contents: (0..80_000).map(|_| rng.next() as u8).collect(),
                });
            }
            if let Ok(packaged) = package(&inner) {
                files.push(SourceFile {
                    path: format!("{prefix}charts/arch-0.1.0.tgz"),
                    executable: false,
                    contents: packaged.archive,
                });
            }
        }
        files
    }

    /// Serves a folder's files by path, listing what it was asked for.
    struct FolderReader {
        files: std::collections::BTreeMap<String, Vec<u8>>,
        asked: std::sync::Mutex<Vec<String>>,
    }

    impl crate::chart::FileReader for FolderReader {
        fn read(&self, path: &str) -> Result<Vec<u8>, String> {
            if let Ok(mut asked) = self.asked.lock() {
                asked.push(path.to_owned());
            }
            self.files
                .get(path)
                .cloned()
                .ok_or_else(|| format!("{path} was not passed unread"))
        }
    }

    /// What `capstan template` prints of a chart: the output, or the error.
    fn template(
        chart: Result<crate::chart::Chart, String>,
    ) -> Result<crate::output::Assembled, String> {
        let options = crate::engine::RenderOptions::default();
        let values = capstan_gotmpl::value::Value::new_map();
        chart.and_then(|chart| {
            crate::pipeline::render_chart(chart, &values, &options, false)
                .map_err(|e| e.to_string())
        })
    }

    /// Generated chart folders render alike (output, or error, byte for byte) however
    /// `capstan template` hands them over: whole (`load_folder`, the reference), with the
    /// files over 64 KiB passed unread and read on demand (`folder-template`,
    /// `load_folder_in_part`), narrowed first to the files `.helmignore` keeps (the
    /// `chart-folder` export), and packaged into an archive and loaded back (`package`,
    /// then `load_archive`: what `load_folder` stands for). Files `.helmignore` drops are
    /// never read on demand.
    #[test]
    fn generated_folders_render_alike_read_in_part_narrowed_or_packaged() {
        const CHARTS: usize = 120;
        let mut rng = Rng(0xf01d_e700_0043_0004);
        let (mut unread_files, mut read_on_demand, mut failed) = (0, 0, 0);
        for index in 0..CHARTS {
            let files = chart_folder(&mut rng, "gen", "", 0);
            let show = || {
                files
                    .iter()
                    .map(|f| format!("{} ({} bytes)", f.path, f.contents.len()))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let whole = template(load_folder(files.clone()));
            // In part, as the host passes it: files over the limit listed, not read.
            let (read, unread): (Vec<SourceFile>, Vec<SourceFile>) = files
                .iter()
                .cloned()
                .partition(|f| f.contents.len() <= READ_AHEAD_FILE_BYTES);
            unread_files += unread.len();
            let reader = std::sync::Arc::new(FolderReader {
                files: unread
                    .iter()
                    .map(|f| (f.path.clone(), f.contents.clone()))
                    .collect(),
                asked: std::sync::Mutex::default(),
            });
            let listed = unread
                .iter()
                .map(|f| (f.path.clone(), f.contents.len() as u64))
                .collect();
            let in_part = template(load_folder_in_part(read, listed, reader.clone()));
            assert_eq!(
                in_part,
                whole,
                "chart {index}: read in part (left) renders otherwise than whole: {}",
                show()
            );
            let asked = reader.asked.lock().map(|a| a.clone()).unwrap_or_default();
            read_on_demand += asked.len();
            // Narrowed to what `.helmignore` keeps.
            let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
            let rules = files
                .iter()
                .find(|f| f.path == IGNORE_FILE)
                .map(|f| f.contents.as_slice());
            if let Ok(kept) = kept_files(&paths, rules) {
                let ignored: Vec<&str> = (0..paths.len())
                    .filter(|i| !kept.contains(i))
                    .map(|i| paths[i])
                    .collect();
                let read_ignored: Vec<&String> = asked
                    .iter()
                    .filter(|p| ignored.contains(&p.as_str()))
                    .collect();
                assert!(
                    read_ignored.is_empty(),
                    "chart {index}: files .helmignore drops were read: {read_ignored:?}"
                );
                let narrowed = template(load_folder(
                    kept.iter().map(|&i| files[i].clone()).collect(),
                ));
                assert_eq!(
                    narrowed,
                    whole,
                    "chart {index}: narrowed by .helmignore (left) renders otherwise than whole: {}",
                    show()
                );
            }
            // Packaged and loaded back.
            let packaged = package(&files).and_then(|packaged| {
                crate::load::load_archive(&packaged.archive).map_err(|e| e.to_string())
            });
            assert_eq!(
                template(packaged),
                whole,
                "chart {index}: packaged (left) renders otherwise than whole: {}",
                show()
            );
            failed += usize::from(whole.is_err());
        }
        eprintln!(
            "{CHARTS} generated chart folders rendered alike four ways: {unread_files} files passed unread, {read_on_demand} of them read, {failed} renders failed alike"
        );
        assert!(
            unread_files >= CHARTS && read_on_demand >= CHARTS / 2,
            "{unread_files} {read_on_demand}"
        );
        assert!((CHARTS / 50..=CHARTS / 3).contains(&failed), "{failed}");
    }
}
