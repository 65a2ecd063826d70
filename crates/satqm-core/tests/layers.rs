//! The core's modules import downwards only: a lower layer never names a
//! higher one (see docs/architecture.md). This reads the sources, so a new
//! `use crate::…` that breaks the order fails here with its file.

use std::fs;
use std::path::{Path, PathBuf};

/// Layers from the bottom; a module may use its own layer and those below.
const LAYERS: &[&[&str]] = &[
    &[
        "time", "units", "ids", "rng", "error", "packet", "engine", "hint", "alloc", "ring",
    ],
    &["fluid"],
    // A queue discipline runs an AQM on each of its queues (FQ-PIE), and
    // the AQM table builds the disciplines: one layer.
    &["queue", "aqm"],
    &["net"],
    &["transport"],
    &["traffic", "topology", "gateway", "probe", "capture"],
    &["config"],
    &["sim"],
];

fn layer(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("module {module:?} is in no layer: add it to LAYERS"))
}

fn sources(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        for e in fs::read_dir(p).unwrap() {
            sources(&e.unwrap().path(), out);
        }
    } else if p.extension().is_some_and(|e| e == "rs") {
        out.push(p.to_path_buf());
    }
}

#[test]
fn modules_import_downwards_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    for entry in fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if name == "lib" {
            continue;
        }
        let own = layer(&name);
        let mut files = Vec::new();
        sources(&path, &mut files);
        for f in files {
            let text = fs::read_to_string(&f).unwrap();
            for (i, line) in text.lines().enumerate() {
                for part in line.split("crate::").skip(1) {
                    let used: String = part
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if used.is_empty() || used == name {
                        continue;
                    }
                    if layer(&used) > own {
                        bad.push(format!("{}:{}: {name} uses {used}", f.display(), i + 1));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the layers:\n{}",
        bad.join("\n")
    );
}
