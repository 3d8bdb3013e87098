//! The data directory of one command run (`MOBIWF_DATA_DIR`): before the command, each value
//! it reads is a file of its name there (the value's text, or a copy of the file's content);
//! after it succeeded, each name it may write that it left there is read back, a value as text,
//! a file kept in the node's file store.

use std::fs;
use std::path::Path;

use mobiwf_proto::data::MAX_VALUE_BYTES;
use mobiwf_proto::{DataValue, Datum};
use mobiwf_xml_schema::DataKind;

use crate::files::Files;

/// Fills `dir` with the values a command reads, once: a directory filled before (by a run
/// interrupted by a restart) is left as it is, so the command sees what it first saw.
pub fn prepare(dir: &Path, files: &Files, reads: &[Datum]) -> Result<(), String> {
    if dir.exists() {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(dir);
    let tmp = parent.join("data.tmp");
    let _ = fs::remove_dir_all(&tmp);
    let err = |e: std::io::Error| format!("cannot fill the data directory {}: {e}", dir.display());
    fs::create_dir_all(&tmp).map_err(err)?;
    for datum in reads {
        let to = tmp.join(&datum.name);
        match &datum.value {
            DataValue::String(text) | DataValue::Number(text) => {
                fs::write(&to, text).map_err(err)?;
            }
            DataValue::File(f) => {
                // A copy: the command may change its file without changing the store.
                fs::copy(files.path(f), &to).map_err(|e| {
                    format!(
                        "cannot give the command `{}` (file {}, {} bytes): {e}",
                        datum.name, f.sha256, f.size
                    )
                })?;
            }
        }
    }
    fs::rename(&tmp, dir).map_err(err)
}

/// What a command that succeeded wrote: each name of `writes` it left in `dir`, unless it is
/// what it read unchanged. A value over `MAX_VALUE_BYTES`, or a file over `MAX_FILE_BYTES`,
/// is an error (the activity fails); never cut short.
pub fn collect(
    dir: &Path,
    files: &Files,
    reads: &[Datum],
    writes: &[(String, DataKind)],
) -> Result<Vec<(String, DataValue)>, String> {
    let mut out = Vec::new();
    for (name, kind) in writes {
        let path = dir.join(name);
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        let value = match kind {
            DataKind::File => DataValue::File(files.put_path(&path)?),
            DataKind::String | DataKind::Number => {
                if meta.len() > MAX_VALUE_BYTES as u64 {
                    return Err(format!(
                        "it left {} bytes in {}, over the limit of {MAX_VALUE_BYTES} for a \
                         value (MAX_VALUE_BYTES): declare `{name}` as a <file> for long text",
                        meta.len(),
                        path.display()
                    ));
                }
                let text = fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {} as text: {e}", path.display()))?;
                text_value(*kind, &text)
            }
        };
        let unchanged = reads.iter().any(|d| d.name == *name && d.value == value);
        if !unchanged {
            out.push((name.clone(), value));
        }
    }
    Ok(out)
}

/// A value's text as a command wrote it: a number without the spaces and newlines around it,
/// a string without its final line break (what `echo` adds).
fn text_value(kind: DataKind, text: &str) -> DataValue {
    match kind {
        DataKind::Number => DataValue::Number(text.trim().to_owned()),
        _ => {
            let text = text
                .strip_suffix('\n')
                .map(|t| t.strip_suffix('\r').unwrap_or(t))
                .unwrap_or(text);
            DataValue::String(text.to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_proto::ActivityId;

    fn datum(name: &str, value: DataValue) -> Datum {
        Datum {
            name: name.into(),
            value,
            by: mobiwf_proto::Writer::Activity(ActivityId(1)),
            at_us: 1,
            pass: Default::default(),
        }
    }

    #[test]
    fn reads_are_files_and_writes_come_back_typed() {
        let root = tempfile::tempdir().unwrap();
        let files = Files::new(root.path());
        let photo = files.put_bytes(b"JPEG").unwrap();
        let dir = root.path().join("run").join("data");
        let reads = vec![
            datum("reading", DataValue::Number("42".into())),
            datum("photo", DataValue::File(photo.clone())),
        ];
        prepare(&dir, &files, &reads).unwrap();
        assert_eq!(fs::read_to_string(dir.join("reading")).unwrap(), "42");
        assert_eq!(fs::read(dir.join("photo")).unwrap(), b"JPEG");

        fs::write(dir.join("note"), "all good\n").unwrap();
        fs::write(dir.join("reading"), " 43\n").unwrap();
        fs::write(dir.join("report"), "a report").unwrap();
        let writes = vec![
            ("reading".to_owned(), DataKind::Number),
            ("note".to_owned(), DataKind::String),
            ("photo".to_owned(), DataKind::File),
            ("report".to_owned(), DataKind::File),
            ("absent".to_owned(), DataKind::String),
        ];
        let written = collect(&dir, &files, &reads, &writes).unwrap();
        let report = files.put_bytes(b"a report").unwrap();
        assert_eq!(
            written,
            vec![
                ("reading".to_owned(), DataValue::Number("43".into())),
                ("note".to_owned(), DataValue::String("all good".into())),
                // photo is unchanged: not written again.
                ("report".to_owned(), DataValue::File(report)),
            ]
        );
    }

    #[test]
    fn a_filled_directory_is_not_filled_again_and_a_long_value_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let files = Files::new(root.path());
        let dir = root.path().join("data");
        prepare(&dir, &files, &[datum("x", DataValue::String("1".into()))]).unwrap();
        prepare(&dir, &files, &[datum("x", DataValue::String("2".into()))]).unwrap();
        assert_eq!(fs::read_to_string(dir.join("x")).unwrap(), "1");
        fs::write(dir.join("x"), "y".repeat(MAX_VALUE_BYTES + 1)).unwrap();
        let err = collect(&dir, &files, &[], &[("x".to_owned(), DataKind::String)]).unwrap_err();
        assert!(err.contains("MAX_VALUE_BYTES"), "{err}");
    }
}
