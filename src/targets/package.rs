//! A published package as a scan target (`--npm NAME[@VERSION]`, `--pypi NAME[==VERSION]`):
//! installed once into a private cache directory, pinned, started over stdio from its own bin
//! entry or console script, and described from its own installed files (package.json; a
//! wheel's METADATA and entry_points.txt). Naming the package is consent to run it, as `--` is.
//!
//! Installs live in `$CACHE/packages/npm/<name, every / as +>@<version>` (an npm `--prefix`)
//! and `$CACHE/packages/pypi/<name>==<version>` (a venv; `+with-<hash>` is added when `--with`
//! requirements were installed alongside, `+py<version>` when `--python` chose the interpreter;
//! see [`python_key`]), where `$CACHE` is
//! `$MCPRISK_CACHE_DIR`, else `$XDG_CACHE_HOME/mcprisk`, else `~/.cache/mcprisk`; one that is
//! there is reused without touching the network. npm installs run with `--ignore-scripts` and
//! pip installs with `--only-binary=:all:`: installing must not run the package's own code.

use crate::error::{Error, Result};
use crate::targets::mcp::StdioCommand;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// Which registry a package comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registry {
    Npm,
    Pypi,
}

impl Registry {
    /// The name records use (`npm`, `pypi`).
    pub fn as_str(self) -> &'static str {
        match self {
            Registry::Npm => "npm",
            Registry::Pypi => "pypi",
        }
    }

    /// `@` for npm, `==` for PyPI.
    pub fn pin(self) -> &'static str {
        match self {
            Registry::Npm => "@",
            Registry::Pypi => "==",
        }
    }
}

/// A package as named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub registry: Registry,
    pub name: String,
    pub version: Option<String>,
}

impl Spec {
    /// Parses `NAME[@VERSION]` (npm) or `NAME[==VERSION]` (PyPI).
    pub fn parse(registry: Registry, s: &str) -> Result<Spec> {
        let s = s.trim();
        let (name, version) = match registry {
            Registry::Npm => match s[1.min(s.len())..].rfind('@') {
                Some(i) => (&s[..i + 1], Some(&s[i + 2..])),
                None => (s, None),
            },
            Registry::Pypi => match s.split_once("==") {
                Some((n, v)) => (n, Some(v)),
                None => (s, None),
            },
        };
        let flag = format!("--{}", registry.as_str());
        let name_ok = !name.is_empty()
            && !name.starts_with('-')
            && !name.starts_with('.')
            && name.len() <= 214
            && name.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || "-._".contains(c)
                    || (registry == Registry::Npm && "@/~".contains(c))
            })
            && !name.contains("..")
            && match registry {
                Registry::Npm if name.starts_with('@') => {
                    name.matches('/').count() == 1 && !name.ends_with('/') && !name.contains("@/")
                }
                _ => !name.contains('/') && !name[1..].contains('@'),
            };
        if !name_ok {
            return Err(Error::new(format!(
                "{flag} {s:?}: not a package name{}",
                match registry {
                    Registry::Npm => " (NAME or @scope/NAME, optionally @VERSION)",
                    Registry::Pypi => " (NAME, optionally ==VERSION)",
                }
            )));
        }
        let version = match version {
            Some("") => return Err(Error::new(format!("{flag} {s:?}: the version is empty"))),
            Some(v)
                if !v
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._+".contains(c))
                    || v.starts_with('-') =>
            {
                return Err(Error::new(format!(
                    "{flag} {s:?}: give an exact version (ranges and tags are not pinned)"
                )))
            }
            v => v.map(str::to_string),
        };
        Ok(Spec {
            registry,
            name: name.to_string(),
            version,
        })
    }

    /// `NAME@VERSION` / `NAME==VERSION` (just the name without a version).
    pub fn pinned(&self) -> String {
        match &self.version {
            Some(v) => format!("{}{}{v}", self.name, self.registry.pin()),
            None => self.name.clone(),
        }
    }

    /// The install directory's name inside the registry's cache folder: the package and
    /// version; for an install with `--with` requirements a key of them, and for one made
    /// with `--python` the interpreter's (the same package@version with other requirements,
    /// or in another Python, is another install).
    fn dir_name(&self, version: &str, with: &[String], python: Option<&str>) -> String {
        let mut name = match self.registry {
            Registry::Npm => format!("{}@{version}", self.name.replace('/', "+")),
            Registry::Pypi => format!("{}=={version}", self.name),
        };
        if let Some(k) = with_key(with) {
            name.push_str(&format!("+with-{k}"));
        }
        if let Some(k) = python.map(python_key) {
            name.push_str(&format!("+py{k}"));
        }
        name
    }
}

/// Checks and normalizes a `--with` requirement (PyPI): a distribution name with optional
/// extras and version specifiers (`mcp<2`, `mcp>=1.9,<2`, `lxml[html_clean]`), whitespace
/// removed. A URL, a path, an environment marker or a pip option is refused: the requirement
/// is installed beside a pinned package, and must say nothing but which release.
pub fn check_with(req: &str) -> Result<String> {
    let r: String = req.chars().filter(|c| !c.is_whitespace()).collect();
    let ok = r.len() <= 200
        && r.starts_with(|c: char| c.is_ascii_alphanumeric())
        && r.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._[],<>=!~*".contains(c));
    if !ok {
        return Err(Error::new(format!(
            "--with {req:?}: not a requirement (NAME, optionally [EXTRAS] and version \
             specifiers, e.g. 'mcp<2'; no URLs, paths, markers or pip options)"
        )));
    }
    Ok(r)
}

/// The requirements of `--with`, checked, normalized, sorted and without repeats (the order
/// they were given in changes nothing that is installed).
pub fn with_requirements(given: &[String]) -> Result<Vec<String>> {
    let mut out = given
        .iter()
        .map(|r| check_with(r))
        .collect::<Result<Vec<_>>>()?;
    out.sort();
    out.dedup();
    Ok(out)
}

/// The first 12 hex digits of the sha256 of the requirements joined by newlines (none for no
/// requirements): the part of an install's identity that `--with` adds.
pub fn with_key(with: &[String]) -> Option<String> {
    (!with.is_empty()).then(|| short_sha256(&with.join("\n")))
}

/// The first 12 hex digits of the sha256 of `text`: a short name part for an install key.
fn short_sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(text.as_bytes()))[..12].to_string()
}

/// The part of an install's identity that `--python` adds: the version asked for (`3.12` and
/// `python3.12` are both `3.12`), or for an interpreter named by path or another name the
/// first 12 hex digits of the sha256 of that name, after `-`.
pub fn python_key(python: &str) -> String {
    let version = python.strip_prefix("python").unwrap_or(python);
    if !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return version.to_string();
    }
    format!("-{}", short_sha256(python))
}

/// How to start the installed package, from the command line.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Which bin entry or console script (needed when the package has several).
    pub bin: Option<String>,
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Environment for the server (placeholder credentials, settings).
    pub env: Vec<(String, String)>,
    /// The Python interpreter to create a new venv with (`3.12`, `python3.12` or a path).
    pub python: Option<String>,
    /// More requirements installed alongside a PyPI package (`mcp<2`), as `uvx --with` has
    /// them: checked, normalized and sorted (see [`with_requirements`]). Part of the install's
    /// identity.
    pub with: Vec<String>,
    /// Remove the install when the command is done.
    pub no_keep: bool,
    /// Start the server in a network namespace of its own, with no interfaces.
    pub no_network: bool,
}

/// What a package says about itself in its installed files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    pub name: String,
    pub version: String,
    pub summary: Option<String>,
    pub repository: Option<String>,
    pub homepage: Option<String>,
    pub license: Option<String>,
    pub author: Option<String>,
    /// Bin entries or console scripts, in the order the package lists them.
    pub bins: Vec<String>,
}

/// An installed package.
#[derive(Debug, Clone)]
pub struct Installed {
    pub spec: Spec,
    /// Its install directory (the npm prefix, or the venv).
    pub dir: PathBuf,
    pub meta: Meta,
    /// Whether this run installed it (rather than finding it in the cache).
    pub fresh: bool,
    /// The `--with` requirements installed alongside it (normalized and sorted).
    pub with: Vec<String>,
}

impl Installed {
    /// The exact version installed.
    pub fn version(&self) -> &str {
        &self.meta.version
    }

    /// The spec pinned to the installed version.
    pub fn pinned(&self) -> String {
        format!(
            "{}{}{}",
            self.spec.name,
            self.spec.registry.pin(),
            self.meta.version
        )
    }

    /// ` --with REQ` for each requirement installed alongside (empty without any): what a
    /// snapshot's source adds to `pypi NAME@VERSION` so it says exactly what was run.
    pub fn with_words(&self) -> String {
        self.with.iter().map(|w| format!(" --with {w}")).collect()
    }

    /// The bin entry or console script to start: `wanted`, the only one, or the one named
    /// like the package; several others are an error that lists them.
    pub fn choose_bin(&self, wanted: Option<&str>) -> Result<String> {
        let bins = &self.meta.bins;
        if let Some(w) = wanted {
            let linked = |b: &String| b == w || b.rsplit('/').next() == Some(w);
            return if let Some(b) = bins.iter().find(|b| linked(b)) {
                Ok(b.clone())
            } else if bins.is_empty() {
                Err(not_a_server(self))
            } else {
                Err(Error::new(format!(
                    "{}: no bin {w:?}; it has {}",
                    self.pinned(),
                    bins.join(", ")
                )))
            };
        }
        match bins.as_slice() {
            [] => Err(not_a_server(self)),
            [one] => Ok(one.clone()),
            many => {
                let tail = self.spec.name.rsplit('/').next().unwrap_or(&self.spec.name);
                let norm = |s: &str| s.to_ascii_lowercase().replace(['_', '.'], "-");
                if let Some(b) = many.iter().find(|b| norm(b) == norm(tail)) {
                    return Ok(b.clone());
                }
                let mcp: Vec<&String> = many
                    .iter()
                    .filter(|b| b.to_ascii_lowercase().contains("mcp"))
                    .collect();
                if let [one] = mcp.as_slice() {
                    return Ok((*one).clone());
                }
                Err(Error::new(format!(
                    "{} has several commands ({}); choose one with --bin",
                    self.pinned(),
                    many.join(", ")
                )))
            }
        }
    }

    /// The path of a bin entry or console script (npm links a scoped bin name, `@a/b`, as `b`).
    pub fn bin_path(&self, bin: &str) -> PathBuf {
        match self.spec.registry {
            Registry::Npm => self
                .dir
                .join("node_modules/.bin")
                .join(bin.rsplit('/').next().unwrap_or(bin)),
            Registry::Pypi => self.dir.join("bin").join(bin),
        }
    }

    /// The stdio command that starts it.
    pub fn command(&self, launch: &Launch) -> Result<StdioCommand> {
        let bin = self.choose_bin(launch.bin.as_deref())?;
        let path = self.bin_path(&bin);
        if !path.exists() {
            return Err(Error::new(format!(
                "{}: {} is not there (a broken install? remove {} and try again)",
                self.pinned(),
                path.display(),
                self.dir.display()
            )));
        }
        let mut program = path.display().to_string();
        let mut args = launch.args.clone();
        if self.spec.registry == Registry::Pypi {
            // Through the venv's own python: a venv moved into place after its install keeps
            // working that way, while its scripts' #! lines name where it was built.
            args.insert(0, program);
            program = self.dir.join("bin/python").display().to_string();
        }
        if launch.no_network {
            let mut wrapped = no_network_prefix()?;
            wrapped.push(program);
            wrapped.extend(args);
            program = wrapped.remove(0);
            args = wrapped;
        }
        let mut env = launch.env.clone();
        if self.spec.registry == Registry::Pypi && !env.iter().any(|(k, _)| k == "PATH") {
            // The venv's scripts first, as an activated venv has them.
            let inherited = std::env::var("PATH").unwrap_or_default();
            let venv_bin = self.dir.join("bin").display().to_string();
            env.push(("PATH".into(), format!("{venv_bin}:{inherited}")));
        }
        Ok(StdioCommand {
            program,
            args,
            env,
            cwd: None,
        })
    }

    /// How a person starts the same server (`npx -y NAME@VERSION ARGS`, `uvx ...`).
    pub fn start_line(&self, bin: &str, args: &[String]) -> String {
        let tail = self.spec.name.rsplit('/').next().unwrap_or(&self.spec.name);
        let with = self
            .with
            .iter()
            .flat_map(|w| ["--with".to_string(), w.clone()]);
        let mut words: Vec<String> = match self.spec.registry {
            Registry::Npm if bin == tail || self.meta.bins.len() == 1 => {
                vec!["npx".into(), "-y".into(), self.pinned()]
            }
            Registry::Npm => vec![
                "npx".into(),
                "-y".into(),
                "-p".into(),
                self.pinned(),
                bin.into(),
            ],
            Registry::Pypi if bin == self.spec.name => std::iter::once("uvx".to_string())
                .chain(with)
                .chain([self.pinned()])
                .collect(),
            Registry::Pypi => std::iter::once("uvx".to_string())
                .chain(with)
                .chain(["--from".into(), self.pinned(), bin.into()])
                .collect(),
        };
        words.extend(args.iter().cloned());
        shell_join(&words)
    }
}

/// Words as a POSIX shell line, quoting only the words that need it (`==`, `@` and `=` do not).
pub fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-^~".contains(c));
            if plain {
                w.clone()
            } else {
                shlex::try_quote(w)
                    .map(|q| q.into_owned())
                    .unwrap_or_else(|_| format!("'{}'", w.replace('\'', "'\\''")))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn not_a_server(i: &Installed) -> Error {
    Error::new(format!(
        "not an MCP server: {} {} declares no {} to start",
        i.spec.registry.as_str(),
        i.pinned(),
        match i.spec.registry {
            Registry::Npm => "bin entry",
            Registry::Pypi => "console script",
        }
    ))
}

/// `$MCPRISK_CACHE_DIR`, else `$XDG_CACHE_HOME/mcprisk`, else `~/.cache/mcprisk`.
pub fn cache_base() -> Option<PathBuf> {
    match std::env::var_os("MCPRISK_CACHE_DIR") {
        Some(d) if !d.is_empty() => Some(PathBuf::from(d)),
        _ => match std::env::var_os("XDG_CACHE_HOME") {
            Some(d) if !d.is_empty() => Some(PathBuf::from(d).join("mcprisk")),
            _ => Some(PathBuf::from(std::env::var_os("HOME")?).join(".cache/mcprisk")),
        },
    }
}

/// Where a registry's installs live.
fn registry_dir(registry: Registry) -> Result<PathBuf> {
    cache_base()
        .map(|b| b.join("packages").join(registry.as_str()))
        .ok_or_else(|| Error::new("no cache directory: set MCPRISK_CACHE_DIR"))
}

/// Installs removed when the command is done (`--no-keep`).
static REMOVE_AFTER: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the installs that `--no-keep` asked to remove; called once the command is done.
pub fn cleanup() {
    let dirs = std::mem::take(&mut *REMOVE_AFTER.lock().unwrap_or_else(|e| e.into_inner()));
    for d in dirs {
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// Installs the package, or finds it installed, and reads what it says about itself.
pub fn install(spec: &Spec, launch: &Launch, quiet: bool) -> Result<Installed> {
    if !launch.with.is_empty() && spec.registry != Registry::Pypi {
        return Err(Error::new(
            "--with applies to --pypi packages (requirements installed alongside)",
        ));
    }
    let with = with_requirements(&launch.with)?;
    let root = registry_dir(spec.registry)?;
    let found = spec.version.as_ref().and_then(|v| {
        let dir = root.join(spec.dir_name(v, &with, launch.python.as_deref()));
        read_meta(spec, &dir).ok().map(|meta| (dir, meta))
    });
    let installed = match found {
        Some((dir, meta)) => Installed {
            spec: spec.clone(),
            dir,
            meta,
            fresh: false,
            with,
        },
        None => fresh_install(spec, launch, &with, &root, quiet)?,
    };
    if launch.no_keep {
        REMOVE_AFTER
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(installed.dir.clone());
    }
    Ok(installed)
}

fn fresh_install(
    spec: &Spec,
    launch: &Launch,
    with: &[String],
    root: &Path,
    quiet: bool,
) -> Result<Installed> {
    std::fs::create_dir_all(root)
        .map_err(|e| Error::new(format!("{}: cannot create: {e}", root.display())))?;
    let tmp = tempfile::Builder::new()
        .prefix(".installing-")
        .tempdir_in(root)
        .map_err(|e| Error::new(format!("{}: cannot create: {e}", root.display())))?;
    let dir = tmp.path().to_path_buf();
    if !quiet {
        eprintln!(
            "mcprisk: installing {} {}{}",
            spec.registry.as_str(),
            spec.pinned(),
            with.iter()
                .map(|w| format!(" with {w}"))
                .collect::<String>()
        );
    }
    match spec.registry {
        Registry::Npm => {
            let mut cmd = Command::new(npm_program());
            cmd.args(["install", "--prefix"])
                .arg(&dir)
                .args([
                    "--no-audit",
                    "--no-fund",
                    "--ignore-scripts",
                    "--no-save",
                    "--loglevel=error",
                ])
                .arg(spec.pinned());
            run_installer(cmd, spec)?;
        }
        Registry::Pypi => {
            let python = match &launch.python {
                Some(p) if p.chars().all(|c| c.is_ascii_digit() || c == '.') => {
                    format!("python{p}")
                }
                Some(p) => p.clone(),
                None => "python3".to_string(),
            };
            let mut venv = Command::new(&python);
            venv.args(["-m", "venv"]).arg(&dir);
            run_installer(venv, spec)?;
            let mut pip = Command::new(dir.join("bin/python"));
            pip.args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
                "--only-binary=:all:",
            ])
            .arg(spec.pinned())
            // In the same resolution as the package: pip picks the package's other
            // dependencies to fit them.
            .args(with);
            run_installer(pip, spec)?;
        }
    }
    let meta = read_meta(spec, &dir)?;
    if let Some(v) = &spec.version {
        if *v != meta.version {
            return Err(Error::new(format!(
                "{}: the installer gave version {}",
                spec.pinned(),
                meta.version
            )));
        }
    }
    let dest = root.join(spec.dir_name(&meta.version, with, launch.python.as_deref()));
    let tmp_path = tmp.keep();
    if dest.exists() && read_meta(spec, &dest).is_ok() {
        // Installed meanwhile (or earlier, without a version asked for): keep that one.
        let _ = std::fs::remove_dir_all(&tmp_path);
    } else if let Err(e) = std::fs::remove_dir_all(&dest)
        .or_else(|e| if dest.exists() { Err(e) } else { Ok(()) })
        .and_then(|_| std::fs::rename(&tmp_path, &dest))
    {
        let _ = std::fs::remove_dir_all(&tmp_path);
        return Err(Error::new(format!(
            "{}: cannot move the install: {e}",
            dest.display()
        )));
    }
    if spec.registry == Registry::Pypi {
        relocate_scripts(&dest, &tmp_path);
    }
    let meta = read_meta(spec, &dest)?;
    Ok(Installed {
        spec: spec.clone(),
        dir: dest,
        meta,
        fresh: true,
        with: with.to_vec(),
    })
}

/// pip writes each console script with a `#!` line naming the venv's python where it was
/// built (the `.installing-` directory). mcprisk starts the server's own script through the
/// venv's python, but a server that runs another of its scripts by name (semgrep-mcp runs
/// `semgrep`) would fail with "No such file or directory" once the venv is moved into place:
/// point those lines (the first two, for pip's `#!/bin/sh` + `'''exec'` form) at where it is.
fn relocate_scripts(venv: &Path, built_at: &Path) {
    let old = built_at.display().to_string();
    let new = venv.display().to_string();
    let Ok(rd) = std::fs::read_dir(venv.join("bin")) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if e.file_type().map_or(true, |t| !t.is_file()) {
            continue; // python itself is a link to the base interpreter
        }
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        if !bytes.starts_with(b"#!") {
            continue;
        }
        let head_end = bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .nth(1)
            .map_or(bytes.len(), |(i, _)| i);
        let Ok(head) = std::str::from_utf8(&bytes[..head_end]) else {
            continue;
        };
        if !head.contains(&old) {
            continue;
        }
        let mut out = head.replace(&old, &new).into_bytes();
        out.extend_from_slice(&bytes[head_end..]);
        // Written in place: the file keeps its mode.
        let _ = std::fs::write(&p, out);
    }
}

/// `npm`, or `$MCPRISK_NPM`.
fn npm_program() -> String {
    std::env::var("MCPRISK_NPM").unwrap_or_else(|_| "npm".into())
}

fn run_installer(mut cmd: Command, spec: &Spec) -> Result<()> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| Error::new(format!("{}: cannot run {program}: {e}", spec.pinned())))?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .rev()
        .take(6)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    Err(Error::new(format!(
        "install failed: {} {}: {program} {}: {}",
        spec.registry.as_str(),
        spec.pinned(),
        out.status,
        crate::output::sanitize::one_line(&tail.join(" | "), 600)
    )))
}

/// The words to put before a command so it runs without network: `unshare -n --` as root,
/// `unshare -rn --` otherwise (a user namespace), whichever works here.
pub fn no_network_prefix() -> Result<Vec<String>> {
    for flags in ["-n", "-rn"] {
        let ok = Command::new("unshare")
            .args([flags, "--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Ok(vec!["unshare".into(), flags.into(), "--".into()]);
        }
    }
    Err(Error::new(
        "--no-network: cannot start a process without network here (unshare -n failed)",
    ))
}

// ----------------------------------------------------------------------------------------------
// What the installed files say

/// Reads the package's own metadata from its install directory.
pub fn read_meta(spec: &Spec, dir: &Path) -> Result<Meta> {
    match spec.registry {
        Registry::Npm => read_npm(spec, dir),
        Registry::Pypi => read_pypi(spec, dir),
    }
}

fn read_npm(spec: &Spec, dir: &Path) -> Result<Meta> {
    let path = dir
        .join("node_modules")
        .join(&spec.name)
        .join("package.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::new(format!("{}: {e}", path.display())))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Error::new(format!("{}: not JSON: {e}", path.display())))?;
    npm_meta(&spec.name, &v).ok_or_else(|| {
        Error::new(format!(
            "{}: no version in the installed package.json",
            path.display()
        ))
    })
}

/// The facts of a package.json.
pub fn npm_meta(name: &str, v: &Value) -> Option<Meta> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let version = s("version")?;
    let tail = name.rsplit('/').next().unwrap_or(name);
    let bins = match v.get("bin") {
        Some(Value::String(_)) => vec![tail.to_string()],
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    let repository = match v.get("repository") {
        Some(Value::String(r)) => repo_url(r),
        Some(Value::Object(m)) => m.get("url").and_then(Value::as_str).and_then(repo_url),
        _ => None,
    };
    let license = match v.get("license") {
        Some(Value::String(l)) => Some(l.clone()),
        Some(Value::Object(m)) => m.get("type").and_then(Value::as_str).map(String::from),
        _ => None,
    };
    let author = match v.get("author") {
        Some(Value::String(a)) => person_name(a),
        Some(Value::Object(m)) => m.get("name").and_then(Value::as_str).map(String::from),
        _ => None,
    };
    Some(Meta {
        name: name.to_string(),
        version,
        summary: s("description"),
        repository,
        homepage: s("homepage"),
        license,
        author,
        bins,
    })
}

/// `Name <mail> (url)` -> `Name`.
fn person_name(s: &str) -> Option<String> {
    let n = s.split(['<', '(']).next().unwrap_or("").trim();
    (!n.is_empty()).then(|| n.to_string())
}

/// A repository URL in the `https://host/owner/repo` form, from the shapes package
/// metadata uses (`git+https://...git`, `git@github.com:o/r.git`, `github:o/r`, `o/r`).
pub fn repo_url(raw: &str) -> Option<String> {
    let r = raw.trim();
    let r = r.strip_prefix("git+").unwrap_or(r);
    let r = if let Some(rest) = r.strip_prefix("github:") {
        format!("https://github.com/{rest}")
    } else if let Some(rest) = r.strip_prefix("gitlab:") {
        format!("https://gitlab.com/{rest}")
    } else if let Some(rest) = r.strip_prefix("git@") {
        format!("https://{}", rest.replacen(':', "/", 1))
    } else if let Some(rest) = r.strip_prefix("git://") {
        format!("https://{rest}")
    } else if let Some(rest) = r.strip_prefix("ssh://git@") {
        format!("https://{rest}")
    } else if !r.contains(':')
        && r.matches('/').count() == 1
        && !r.starts_with('/')
        && !r.starts_with('.')
    {
        format!("https://github.com/{r}")
    } else {
        r.to_string()
    };
    let r = r.trim_end_matches('/');
    let r = r.strip_suffix(".git").unwrap_or(r);
    let r = r.split(['#', '?']).next().unwrap_or(r);
    crate::catalog::registry::clean_url(Some(r))
}

/// The owner part of a `https://github.com/OWNER/...` (or gitlab, codeberg, bitbucket) URL.
pub fn repo_owner(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let mut parts = rest.split('/');
    let host = parts.next()?.to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    if !matches!(
        host,
        "github.com" | "gitlab.com" | "codeberg.org" | "bitbucket.org"
    ) {
        return None;
    }
    let owner = parts.next()?;
    (!owner.is_empty()).then(|| owner.to_string())
}

/// PEP 503: lower case, runs of `-`, `_`, `.` as one `-`.
pub fn pypi_normalize(name: &str) -> String {
    let mut out = String::new();
    let mut sep = false;
    for c in name.chars() {
        if "-_.".contains(c) {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

fn read_pypi(spec: &Spec, dir: &Path) -> Result<Meta> {
    let want = pypi_normalize(&spec.name);
    let lib = dir.join("lib");
    let mut candidates = Vec::new();
    for py in std::fs::read_dir(&lib)
        .map_err(|e| Error::new(format!("{}: {e}", lib.display())))?
        .flatten()
    {
        let site = py.path().join("site-packages");
        if let Ok(rd) = std::fs::read_dir(&site) {
            for e in rd.flatten() {
                let file = e.file_name().to_string_lossy().into_owned();
                if let Some(stem) = file.strip_suffix(".dist-info") {
                    let dist = stem.rsplit_once('-').map(|(n, _)| n).unwrap_or(stem);
                    if pypi_normalize(dist) == want {
                        candidates.push(e.path());
                    }
                }
            }
        }
    }
    let info = candidates.into_iter().next().ok_or_else(|| {
        Error::new(format!(
            "{}: no installed distribution {} in {}",
            spec.pinned(),
            spec.name,
            dir.display()
        ))
    })?;
    let text = std::fs::read_to_string(info.join("METADATA"))
        .map_err(|e| Error::new(format!("{}/METADATA: {e}", info.display())))?;
    let entry_points = std::fs::read_to_string(info.join("entry_points.txt")).unwrap_or_default();
    pypi_meta(&spec.name, &text, &entry_points)
        .ok_or_else(|| Error::new(format!("{}/METADATA: no Version", info.display())))
}

/// The facts of a wheel's METADATA and entry_points.txt.
pub fn pypi_meta(name: &str, metadata: &str, entry_points: &str) -> Option<Meta> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in metadata.lines() {
        if line.is_empty() {
            break; // the description body follows
        }
        if line.starts_with([' ', '\t']) {
            if let Some(last) = fields.last_mut() {
                last.1.push(' ');
                last.1.push_str(line.trim());
            }
            continue;
        }
        if let Some((k, v)) = line.split_once(':') {
            fields.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let get = |k: &str| {
        fields
            .iter()
            .find(|(f, v)| f == k && !v.is_empty() && v != "UNKNOWN")
            .map(|(_, v)| v.clone())
    };
    let version = get("version")?;
    let urls: Vec<(String, String)> = fields
        .iter()
        .filter(|(k, _)| k == "project-url")
        .filter_map(|(_, v)| {
            let (label, url) = v.split_once(',')?;
            Some((label.trim().to_ascii_lowercase(), url.trim().to_string()))
        })
        .collect();
    let homepage = get("home-page").or_else(|| {
        urls.iter()
            .find(|(l, _)| l.contains("home"))
            .map(|(_, u)| u.clone())
    });
    let code_host = |u: &str| repo_owner(u).is_some();
    let repository = urls
        .iter()
        .find(|(l, u)| {
            ["repository", "source", "code", "github", "gitlab"]
                .iter()
                .any(|w| l.contains(w))
                && code_host(u)
        })
        .or_else(|| urls.iter().find(|(_, u)| code_host(u)))
        .map(|(_, u)| u.clone())
        .or_else(|| homepage.clone().filter(|u| code_host(u)))
        .and_then(|u| repo_url(&u))
        .map(|u| trim_repo_path(&u));
    let license = get("license-expression")
        .or_else(|| get("license").filter(|l| l.len() <= 60))
        .or_else(|| {
            fields
                .iter()
                .filter(|(k, _)| k == "classifier")
                .find_map(|(_, v)| v.strip_prefix("License :: OSI Approved :: "))
                .map(|l| l.trim_end_matches(" License").to_string())
        });
    let author = get("author").or_else(|| get("author-email").and_then(|a| person_name(&a)));
    let mut bins = Vec::new();
    let mut in_scripts = false;
    for line in entry_points.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_scripts = l == "[console_scripts]";
        } else if in_scripts {
            if let Some((k, _)) = l.split_once('=') {
                let k = k.trim();
                if !k.is_empty() {
                    bins.push(k.to_string());
                }
            }
        }
    }
    Some(Meta {
        name: get("name").unwrap_or_else(|| name.to_string()),
        version,
        summary: get("summary"),
        repository,
        homepage,
        license,
        author,
        bins,
    })
}

/// `https://github.com/o/r/tree/main/src/x` -> `https://github.com/o/r`.
fn trim_repo_path(u: &str) -> String {
    let Some(rest) = u.strip_prefix("https://") else {
        return u.to_string();
    };
    let parts: Vec<&str> = rest.split('/').collect();
    if parts.len() > 3 && repo_owner(u).is_some() {
        format!("https://{}", parts[..3].join("/"))
    } else {
        u.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn specs_parse_pinned_or_not() {
        let s = Spec::parse(Registry::Npm, "@azure-devops/mcp@2.10.0").unwrap();
        assert_eq!(
            (s.name.as_str(), s.version.as_deref()),
            ("@azure-devops/mcp", Some("2.10.0"))
        );
        let s = Spec::parse(Registry::Npm, "@playwright/mcp").unwrap();
        assert_eq!((s.name.as_str(), s.version), ("@playwright/mcp", None));
        let s = Spec::parse(Registry::Npm, "tavily-mcp@0.2.22").unwrap();
        assert_eq!(s.dir_name("0.2.22", &[], None), "tavily-mcp@0.2.22");
        assert_eq!(
            Spec::parse(Registry::Npm, "@a/b@1.0.0")
                .unwrap()
                .dir_name("1.0.0", &[], None),
            "@a+b@1.0.0"
        );
        let s = Spec::parse(Registry::Pypi, "mcp-server-git==2025.1.14").unwrap();
        assert_eq!(s.pinned(), "mcp-server-git==2025.1.14");
        for bad in ["../x", "-rf", "a b", "@a/b/c", "x@^1.0", "x@latest@"] {
            assert!(Spec::parse(Registry::Npm, bad).is_err(), "{bad}");
        }
        assert!(Spec::parse(Registry::Pypi, "x>=1").is_err());
        assert!(Spec::parse(Registry::Pypi, "a/b").is_err());
    }

    #[test]
    fn with_requirements_are_checked_and_part_of_the_install_identity() {
        let given = vec![
            " mcp < 2 ".to_string(),
            "bibtexparser<2".into(),
            "mcp<2".into(),
        ];
        let with = with_requirements(&given).unwrap();
        assert_eq!(with, ["bibtexparser<2", "mcp<2"]);
        assert!(check_with("lxml[html_clean]>=5.2,!=5.3.*").is_ok());
        for bad in [
            "-r/etc/passwd",
            "--index-url=x",
            "pkg @ https://example.invalid/x.whl",
            "./local",
            "x; python_version<'3.12'",
            "",
        ] {
            assert!(check_with(bad).is_err(), "{bad}");
        }
        let s = Spec::parse(Registry::Pypi, "pdf-tools-mcp==0.1.4").unwrap();
        let a = s.dir_name("0.1.4", &with, None);
        assert!(a.starts_with("pdf-tools-mcp==0.1.4+with-"), "{a}");
        assert_ne!(a, s.dir_name("0.1.4", &["mcp<2".to_string()], None));
        assert_eq!(s.dir_name("0.1.4", &[], None), "pdf-tools-mcp==0.1.4");
        // The order given does not matter.
        let b = with_requirements(&["mcp<2".into(), "bibtexparser<2".into()]).unwrap();
        assert_eq!(s.dir_name("0.1.4", &b, None), a);
        // scripts/harvest.py computes the same key to find (and remove) the install.
        assert_eq!(
            with_key(&["mcp<2".to_string()]).as_deref(),
            Some("6a90e873a046")
        );
        assert_eq!(with_key(&[]), None);
    }

    #[test]
    fn the_python_asked_for_is_part_of_the_install_identity() {
        let s = Spec::parse(Registry::Pypi, "mcp-server-time==2026.10.19").unwrap();
        let plain = s.dir_name("2026.10.19", &[], None);
        assert_eq!(plain, "mcp-server-time==2026.10.19");
        let py312 = s.dir_name("2026.10.19", &[], Some("3.12"));
        assert_eq!(py312, "mcp-server-time==2026.10.19+py3.12");
        assert_eq!(s.dir_name("2026.10.19", &[], Some("python3.12")), py312);
        assert_ne!(s.dir_name("2026.10.19", &[], Some("3.11")), py312);
        let by_path = s.dir_name("2026.10.19", &[], Some("/opt/py/bin/python3"));
        assert!(
            by_path.starts_with("mcp-server-time==2026.10.19+py-"),
            "{by_path}"
        );
        assert!(!by_path.contains('/'), "{by_path}");
        assert_ne!(
            by_path,
            s.dir_name("2026.10.19", &[], Some("/usr/bin/python3"))
        );
        let with = s.dir_name("2026.10.19", &["mcp<2".to_string()], Some("3.12"));
        assert!(
            with.ends_with("+py3.12") && with.contains("+with-"),
            "{with}"
        );
    }

    #[test]
    fn package_json_facts() {
        let m = npm_meta(
            "@stripe/mcp",
            &json!({"version": "0.2.5", "description": "Stripe MCP",
                "repository": {"type": "git", "url": "git+https://github.com/stripe/agent-toolkit.git", "directory": "x"},
                "license": "MIT", "author": "Stripe <support@stripe.com> (https://stripe.com)",
                "bin": {"mcp": "dist/index.js"}}),
        )
        .unwrap();
        assert_eq!(
            m.repository.as_deref(),
            Some("https://github.com/stripe/agent-toolkit")
        );
        assert_eq!(m.author.as_deref(), Some("Stripe"));
        assert_eq!(m.bins, ["mcp"]);
        let m = npm_meta(
            "tavily-mcp",
            &json!({"version": "1", "bin": "x.js", "repository": "github:tavily-ai/tavily-mcp"}),
        )
        .unwrap();
        assert_eq!(m.bins, ["tavily-mcp"]);
        assert_eq!(
            m.repository.as_deref(),
            Some("https://github.com/tavily-ai/tavily-mcp")
        );
        assert_eq!(
            repo_owner("https://github.com/tavily-ai/tavily-mcp").as_deref(),
            Some("tavily-ai")
        );
    }

    #[test]
    fn wheel_metadata_facts() {
        let meta = "Metadata-Version: 2.4\nName: mcp-server-git\nVersion: 2026.10.19\nSummary: A Git server\nProject-URL: Bug Tracker, https://github.com/modelcontextprotocol/servers/issues\nProject-URL: Source, https://github.com/modelcontextprotocol/servers/tree/main/src/git\nAuthor: Anthropic, PBC.\nLicense-Expression: MIT\n\nlong text\nName: not this\n";
        let ep = "[console_scripts]\nmcp-server-git = mcp_server_git:main\n\n[other]\nx = y\n";
        let m = pypi_meta("mcp-server-git", meta, ep).unwrap();
        assert_eq!(m.version, "2026.10.19");
        assert_eq!(
            m.repository.as_deref(),
            Some("https://github.com/modelcontextprotocol/servers")
        );
        assert_eq!(m.license.as_deref(), Some("MIT"));
        assert_eq!(m.bins, ["mcp-server-git"]);
        assert_eq!(m.author.as_deref(), Some("Anthropic, PBC."));
        assert_eq!(
            pypi_normalize("awslabs.aws_Doc--mcp"),
            "awslabs-aws-doc-mcp"
        );
    }
}
