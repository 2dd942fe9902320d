//! `[lsp]` in the user's settings: the language servers mino may start
//! (`[lsp.NAME]`: command, args, extensions, root_markers), the built-in
//! entries used when their program is on `PATH`, and
//! `diagnostics_after_edit`. Checks the shape only: never looks for a
//! program and never starts anything.

use super::error::{ConfigError, KeyPath};
use std::collections::BTreeMap;

use super::raw::RawLspServer;
use super::source::SourceFile;

/// One language server mino may start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspServer {
    pub name: String,
    /// The program, found on `PATH` when not a path.
    pub command: String,
    pub args: Vec<String>,
    /// File name extensions it covers, without the dot.
    pub extensions: Vec<String>,
    /// Files or directories that mark a workspace's root: the nearest
    /// directory holding one (inside the project) is the server's root,
    /// the project directory otherwise.
    pub root_markers: Vec<String>,
    /// What `initialize` hands the server (its own settings).
    pub initialization_options: Option<serde_json::Value>,
    /// A built-in entry: used only when its program is on `PATH`.
    pub builtin: bool,
}

/// `[lsp]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspSettings {
    /// The user's entries first, then the built-in ones they do not name.
    pub servers: Vec<LspServer>,
    /// The result of edit_file, write_file and rename ends with the
    /// server's errors and warnings for the changed files.
    pub diagnostics_after_edit: bool,
}

impl Default for LspSettings {
    fn default() -> Self {
        Self {
            servers: builtin(),
            diagnostics_after_edit: true,
        }
    }
}

/// One built-in server: name, command, args, extensions, root markers.
type Builtin = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// The built-in servers, in the order they are tried.
const BUILTIN: [Builtin; 6] = [
    (
        "rust-analyzer",
        "rust-analyzer",
        &[],
        &["rs"],
        &["Cargo.toml"],
    ),
    (
        "pyright",
        "pyright-langserver",
        &["--stdio"],
        &["py", "pyi"],
        &[
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
        ],
    ),
    (
        "pylsp",
        "pylsp",
        &[],
        &["py", "pyi"],
        &[
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
        ],
    ),
    (
        "typescript-language-server",
        "typescript-language-server",
        &["--stdio"],
        &["ts", "tsx", "js", "jsx", "mts", "cts", "mjs", "cjs"],
        &["tsconfig.json", "jsconfig.json", "package.json"],
    ),
    ("gopls", "gopls", &[], &["go"], &["go.mod", "go.work"]),
    (
        "clangd",
        "clangd",
        &[],
        &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        &["compile_commands.json", "compile_flags.txt", ".clangd"],
    ),
];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

/// The built-in entries, in the order they are tried.
pub fn builtin() -> Vec<LspServer> {
    BUILTIN
        .iter()
        .map(|(name, command, args, extensions, markers)| LspServer {
            name: (*name).to_string(),
            command: (*command).to_string(),
            args: strings(args),
            extensions: strings(extensions),
            root_markers: strings(markers),
            // typescript-language-server answers from a syntax-only server
            // while the project loads (an import instead of the
            // definition): the full one answers every request.
            initialization_options: (*name == "typescript-language-server")
                .then(|| serde_json::json!({"tsserver": {"useSyntaxServer": "never"}})),
            builtin: true,
        })
        .collect()
}

const EXTENSION_ACCEPTED: &str = "file name extensions without the dot, such as [\"py\", \"pyi\"]";

const SERVER_ACCEPTED: &str =
    "a table [lsp.NAME] with command, args, extensions, root_markers and initialization_options";

/// `[lsp]` of the user's file.
pub fn lsp_settings(
    src: &SourceFile,
    raw: &BTreeMap<String, toml::Value>,
) -> Result<LspSettings, ConfigError> {
    let builtins = builtin();
    let mut servers = Vec::new();
    let mut diagnostics_after_edit = true;
    for (name, value) in raw {
        let key = KeyPath::of(&["lsp", name]);
        if name == "diagnostics_after_edit" {
            diagnostics_after_edit = value.as_bool().ok_or_else(|| {
                src.invalid(
                    key.clone(),
                    format!("{value} is not a boolean"),
                    "true or false",
                )
            })?;
            continue;
        }
        if !value.is_table() {
            return Err(src.invalid(
                key,
                format!("{value} is not a table"),
                format!("diagnostics_after_edit = true or false, or {SERVER_ACCEPTED}"),
            ));
        }
        let entry: RawLspServer = value.clone().try_into().map_err(|e: toml::de::Error| {
            src.invalid(key.clone(), e.message().to_string(), SERVER_ACCEPTED)
        })?;
        let base = builtins.iter().find(|b| &b.name == name);
        servers.push(server(src, &key, name, &entry, base)?);
    }
    servers.extend(builtins.into_iter().filter(|b| !raw.contains_key(&b.name)));
    Ok(LspSettings {
        servers,
        diagnostics_after_edit,
    })
}

fn server(
    src: &SourceFile,
    key: &KeyPath,
    name: &str,
    entry: &RawLspServer,
    base: Option<&LspServer>,
) -> Result<LspServer, ConfigError> {
    let command = match (&entry.command, base) {
        (Some(command), _) if !command.trim().is_empty() => command.clone(),
        (Some(_), _) => {
            return Err(src.invalid(
                key.key("command"),
                "an empty command",
                "the program that starts the language server (speaking LSP on its stdio)",
            ));
        }
        (None, Some(base)) => base.command.clone(),
        (None, None) => {
            return Err(src.invalid(
                key.key("command"),
                "missing",
                "the program that starts the language server (speaking LSP on its stdio)",
            ));
        }
    };
    let extensions = match (&entry.extensions, base) {
        (Some(list), _) => list.clone(),
        (None, Some(base)) => base.extensions.clone(),
        (None, None) => {
            return Err(src.invalid(key.key("extensions"), "missing", EXTENSION_ACCEPTED));
        }
    };
    if extensions.is_empty()
        || extensions
            .iter()
            .any(|e| e.is_empty() || e.starts_with('.') || e.contains(['/', '\\']))
    {
        return Err(src.invalid(
            key.key("extensions"),
            format!("{extensions:?} is not a list of extensions"),
            EXTENSION_ACCEPTED,
        ));
    }
    Ok(LspServer {
        name: name.to_string(),
        command,
        args: entry
            .args
            .clone()
            .or_else(|| base.map(|b| b.args.clone()))
            .unwrap_or_default(),
        extensions,
        root_markers: entry
            .root_markers
            .clone()
            .or_else(|| base.map(|b| b.root_markers.clone()))
            .unwrap_or_default(),
        initialization_options: match &entry.initialization_options {
            Some(table) => Some(serde_json::to_value(table).map_err(|e| {
                src.invalid(
                    key.key("initialization_options"),
                    e.to_string(),
                    "a table of the server's own settings",
                )
            })?),
            None => base.and_then(|b| b.initialization_options.clone()),
        },
        builtin: false,
    })
}
