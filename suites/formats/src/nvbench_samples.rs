//! nvbench's per-sample times: the binary files that `--jsonbin` writes beside the JSON
//! (`write_jsonbin_sidecar` in NVIDIA/nvbench `nvbench/json_printer.cu`), found where nvbench's
//! own comparison script finds them and checked against the summary that names them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::side_files::SideFiles;

/// (summary tag naming a sample file, measure whose samples it holds): the cold GPU times of
/// `measure_cold.cu` (`m_cuda_times`) and the CPU times of `measure_cpu_only.cxx`.
pub(crate) const SAMPLE_FILES: [(&str, &str); 2] = [
    ("nv/json/bin:nv/cold/sample_times", "gpu_time"),
    ("nv/json/bin:nv/cpu_only/sample_times", "cpu_time"),
];

/// Bytes per sample: nvbench stores each time as a float32 (`write_out_values_as_float32`).
const SAMPLE_BYTES: usize = 4;

/// Hint for a sample file that is not where the JSON says.
const KEEP_HINT: &str = "hint: keep the `-bin` directory that nvbench --jsonbin wrote next to \
     the JSON file";

/// The sample times of the file that the summary `tag` (`summ`) names, in nanoseconds. `Err`
/// is one line naming the file, for the caller to prefix with the state.
pub(crate) fn read_samples(
    files: &dyn SideFiles,
    tag: &str,
    summ: &Value,
) -> Result<Vec<f64>, String> {
    let datum = |name: &str| {
        summ.get("data")
            .and_then(Value::as_array)
            .and_then(|d| {
                d.iter()
                    .find(|d| d.get("name").and_then(Value::as_str) == Some(name))
            })
            .and_then(|d| d.get("value"))
    };
    let Some(written) = datum("filename") else {
        return Err(format!(
            "`{tag}` names no sample file (nvbench failed to write it; its log says why)"
        ));
    };
    let Some(written) = written.as_str().filter(|s| !s.is_empty()) else {
        return Err(format!("`{tag}`: `filename` is {written}, not a file name"));
    };
    let expected = match datum("size") {
        None => None,
        Some(v) => Some(count(v).ok_or_else(|| format!("`{tag}`: `size` is {v}, not a count"))?),
    };
    let name = match resolve(files, Path::new(written)) {
        Ok(name) => name,
        Err(tried) => {
            let tried: Vec<String> = tried.iter().map(|t| files.locate(t)).collect();
            return Err(format!(
                "sample file {written} not found (looked for {}) ({KEEP_HINT})",
                tried.join(" and ")
            ));
        }
    };
    let shown = || {
        let at = files.locate(&name);
        if at == written {
            format!("sample file {written}")
        } else {
            format!("sample file {written} ({at})")
        }
    };
    let bytes = files
        .read(&name)
        .map_err(|e| format!("{} cannot be read: {e}", shown()))?;
    if bytes.len() % SAMPLE_BYTES != 0 {
        return Err(format!(
            "{} has {} bytes, not a whole number of float32 samples (truncated?)",
            shown(),
            bytes.len()
        ));
    }
    let n = bytes.len() / SAMPLE_BYTES;
    if let Some(size) = expected
        && size != n as u64
    {
        return Err(format!(
            "{} holds {n} samples, but `{tag}` says {size} (truncated, or left by another run?)",
            shown()
        ));
    }
    if n == 0 {
        return Err(format!("{} holds no samples", shown()));
    }
    bytes
        .chunks_exact(SAMPLE_BYTES)
        .enumerate()
        .map(|(i, c)| {
            let s = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if s.is_finite() && s >= 0.0 {
                Ok(f64::from(s) * 1e9)
            } else {
                Err(format!("{}: sample {i} is {s} s, not a time", shown()))
            }
        })
        .collect()
}

/// A count written as nvbench writes int64 (a string) or as a number.
fn count(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) => s.trim().parse().ok(),
        other => other.as_u64(),
    }
}

/// Where the file named `written` is, as `resolve_binary_filename` in nvbench's
/// `scripts/nvbench_compare_robust.py` looks: the name as written (relative to the JSON's
/// directory, nvbench #405 and later; or absolute), else its last two components
/// (`<json>-bin/N.bin`) beside the JSON, for older nvbench, which wrote the `--jsonbin` path
/// plus `-bin/N.bin` relative to its own working directory. `Err`: the places looked at.
fn resolve(files: &dyn SideFiles, written: &Path) -> Result<PathBuf, Vec<PathBuf>> {
    let mut tried = vec![written.to_path_buf()];
    if files.exists(written) {
        return Ok(written.to_path_buf());
    }
    let parts: Vec<_> = written.components().collect();
    if let [.., dir, file] = parts.as_slice()
        && parts.len() > 2
        && dir.as_os_str().to_string_lossy().ends_with("-bin")
    {
        let tail: PathBuf = [dir, file].iter().collect();
        if files.exists(&tail) {
            return Ok(tail);
        }
        tried.push(tail);
    }
    Err(tried)
}

#[cfg(test)]
mod tests {
    use super::super::side_files::MemFiles;
    use super::*;

    fn f32s(xs: &[f32]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn summary(filename: Option<&str>, size: Option<&str>) -> Value {
        let mut data = Vec::new();
        if let Some(f) = filename {
            data.push(serde_json::json!({"name": "filename", "type": "string", "value": f}));
        }
        if let Some(s) = size {
            data.push(serde_json::json!({"name": "size", "type": "int64", "value": s}));
        }
        serde_json::json!({"tag": SAMPLE_FILES[0].0, "data": data})
    }

    const TAG: &str = "nv/json/bin:nv/cold/sample_times";

    #[test]
    fn reads_little_endian_float32_seconds_as_nanoseconds() {
        let files = MemFiles::default().with("r.json-bin/0.bin", f32s(&[1.5e-6, 2.0e-6, 0.25]));
        let s = read_samples(&files, TAG, &summary(Some("r.json-bin/0.bin"), Some("3"))).unwrap();
        assert_eq!(s.len(), 3);
        assert!((s[0] - 1500.0).abs() < 1e-3, "{s:?}");
        assert!((s[1] - 2000.0).abs() < 1e-3, "{s:?}");
        assert_eq!(s[2], 0.25e9);
        // Big-endian bytes would read as other numbers: the byte order is fixed.
        assert_eq!(
            f32::from_le_bytes(f32s(&[0.25])[..4].try_into().unwrap()),
            0.25
        );
        // `size` may be left out (the file's length counts) or written as a number.
        let files = MemFiles::default().with("a.bin", f32s(&[1e-3]));
        assert_eq!(
            read_samples(&files, TAG, &summary(Some("a.bin"), None)).unwrap(),
            vec![f64::from(1e-3f32) * 1e9]
        );
    }

    #[test]
    fn older_nvbench_paths_relative_to_its_working_directory_are_found_beside_the_json() {
        // `--jsonbin out/r.json` before nvbench #405: `out/r.json-bin/0.bin`, which is
        // `r.json-bin/0.bin` beside the JSON; an absolute path from another machine likewise.
        let files = MemFiles::default().with("r.json-bin/0.bin", f32s(&[1e-6]));
        for written in ["out/r.json-bin/0.bin", "/home/ci/build/r.json-bin/0.bin"] {
            let s = read_samples(&files, TAG, &summary(Some(written), Some("1"))).unwrap();
            assert_eq!(s.len(), 1, "{written}");
        }
        // The name as written wins when it exists.
        let files = files.with("out/r.json-bin/0.bin", f32s(&[1e-6, 2e-6]));
        let s = read_samples(&files, TAG, &summary(Some("out/r.json-bin/0.bin"), None)).unwrap();
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn missing_short_odd_sized_and_bad_files_are_one_line_errors_naming_the_file() {
        let files = MemFiles::default()
            .with("short.bin", f32s(&[1e-6, 2e-6]))
            .with("odd.bin", vec![0, 0, 128, 63, 0, 0])
            .with("empty.bin", Vec::new())
            .with("nan.bin", f32s(&[1e-6, f32::NAN]))
            .with("neg.bin", f32s(&[-1e-6]));
        let e = |f: Option<&str>, size: Option<&str>| {
            let e = read_samples(&files, TAG, &summary(f, size)).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
            e
        };
        assert_eq!(
            e(Some("r.json-bin/7.bin"), Some("3")),
            format!(
                "sample file r.json-bin/7.bin not found (looked for r.json-bin/7.bin) ({KEEP_HINT})"
            )
        );
        assert_eq!(
            e(Some("out/r.json-bin/7.bin"), Some("3")),
            format!(
                "sample file out/r.json-bin/7.bin not found (looked for out/r.json-bin/7.bin and \
                 r.json-bin/7.bin) ({KEEP_HINT})"
            )
        );
        assert_eq!(
            e(Some("short.bin"), Some("1000")),
            "sample file short.bin holds 2 samples, but `nv/json/bin:nv/cold/sample_times` \
             says 1000 (truncated, or left by another run?)"
        );
        assert_eq!(
            e(Some("odd.bin"), None),
            "sample file odd.bin has 6 bytes, not a whole number of float32 samples (truncated?)"
        );
        assert_eq!(
            e(Some("empty.bin"), Some("0")),
            "sample file empty.bin holds no samples"
        );
        assert_eq!(
            e(Some("nan.bin"), None),
            "sample file nan.bin: sample 1 is NaN s, not a time"
        );
        assert!(e(Some("neg.bin"), None).contains("sample 0 is -0.000001 s"));
        assert!(e(None, None).contains("names no sample file"));
        assert!(e(Some(""), None).contains("not a file name"));
        assert!(e(Some("short.bin"), Some("many")).contains("`size` is \"many\", not a count"));
    }
}
