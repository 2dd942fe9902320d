//! File paths and the `file:` URIs a language server names documents by.
//! Never touches the file system.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// The `file:` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    Uri::from_str(url.as_str()).ok()
}

/// The absolute path a `file:` URI names; `None` for any other scheme.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let url = url::Url::parse(uri.as_str()).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    url.to_file_path().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        let path = Path::new("/tmp/a b/ü.py");
        let uri = path_to_uri(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%BC.py");
        assert_eq!(uri_to_path(&uri).unwrap(), path);
        let other = Uri::from_str("untitled:x").unwrap();
        assert_eq!(uri_to_path(&other), None);
    }
}
