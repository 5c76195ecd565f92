//! The command line (clap definitions only; `commands` dispatches, `main.rs` maps the outcome
//! to an exit code).

use crate::model::Severity;
use crate::output::terminal::ColorChoice;
use crate::policy::{Flavor, Profile};
use crate::report::Format;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Risk catalog and least-privilege policy generator for MCP servers.
#[derive(Debug, Parser)]
#[command(name = "mcprisk", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Where the taxonomy is documented, for the help of the commands that classify.
pub const TAXONOMY_HELP: &str = "How tools are classified (categories, severities, the hard cases, the grade): \
docs/classification.md in the mcprisk repository. Every rule: `mcprisk rules`; one rule: `mcprisk rules ID`.";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Introspect and assess: every tool's category, severity and evidence, findings, grade.
    #[command(after_help = TAXONOMY_HELP)]
    Scan(ScanArgs),
    /// Write the recommended least-privilege policy.
    #[command(after_help = TAXONOMY_HELP)]
    Policy(PolicyArgs),
    /// CI gate: drift against a lock file, tools a policy does not cover.
    Check(CheckArgs),
    /// List the classification rules, or explain one.
    #[command(after_help = TAXONOMY_HELP)]
    Rules(RulesArgs),
    /// The catalog record of a server, or of one of its tools.
    Lookup(LookupArgs),
    /// Work with the catalog: list, search, show, lint, add, import-registry.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Serve the catalog, the rules and assessments to agents as an MCP server (stdio, or HTTP).
    Serve(ServeArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(CompletionsArgs),
    /// Print a manual page (roff): the program's, or a subcommand's (`man scan`); --dir writes
    /// them all.
    Man(ManArgs),
}

/// `mcprisk man [COMMAND...]`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (`scan`, `catalog add`); the program's when absent.
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Write every page (mcprisk.1, mcprisk-scan.1, ...) into this directory instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    #[arg(short, long)]
    pub quiet: bool,
}

/// `mcprisk completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, ignore_case = true)]
    pub shell: clap_complete::Shell,
}

/// `mcprisk lookup NAME [TOOL]`.
#[derive(Debug, Args)]
pub struct LookupArgs {
    /// The server: id, alias, package name, or a close spelling.
    pub name: String,
    /// One of its tools.
    pub tool: Option<String>,
    /// More catalog records (a directory of YAML files; also MCPRISK_CATALOG).
    #[arg(long = "catalog", value_name = "DIR")]
    pub catalog_dirs: Vec<String>,
    #[command(flatten)]
    pub assess: AssessArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Format::Table)]
    pub format: Format,
    /// Use report templates from this directory.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<String>,
}

/// `mcprisk serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at HOST:PORT (endpoint /mcp) instead of stdio, e.g. 127.0.0.1:7410.
    #[arg(long, value_name = "HOST:PORT")]
    pub http: Option<String>,
    /// Allow --http on an address that is not loopback, and requests from any Origin or Host.
    /// There is no authentication: anyone who reaches the port can use the server.
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// More catalog records (a directory of YAML files; also MCPRISK_CATALOG).
    #[arg(long = "catalog", value_name = "DIR")]
    pub catalog_dirs: Vec<String>,
    /// How strict the recommended rules are (default: balanced).
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Calls per minute for a rate-limited category, e.g. --limit write=20 --limit execute=5.
    #[arg(long = "limit", value_name = "CATEGORY=N")]
    pub limits: Vec<String>,
}

/// `mcprisk catalog ...`.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Every record, or those with tools of a category.
    List {
        /// Only servers with at least one tool of this category.
        #[arg(long, value_name = "CATEGORY")]
        category: Option<String>,
        #[arg(long = "catalog", value_name = "DIR")]
        catalog_dirs: Vec<String>,
        #[arg(long, value_enum, ignore_case = true, default_value_t = RulesFormat::Table)]
        format: RulesFormat,
    },
    /// Records whose id, names, summary or tool names contain WORD.
    Search {
        word: String,
        #[arg(long = "catalog", value_name = "DIR")]
        catalog_dirs: Vec<String>,
        #[arg(long, value_enum, ignore_case = true, default_value_t = RulesFormat::Table)]
        format: RulesFormat,
    },
    /// One record as stored (YAML).
    Show {
        id: String,
        #[arg(long = "catalog", value_name = "DIR")]
        catalog_dirs: Vec<String>,
    },
    /// Check records: they parse, ids and aliases are unique, fingerprints match snapshots.
    Lint {
        /// Directories to check (default: catalog/servers).
        dirs: Vec<String>,
    },
    /// A record from a live scan or a saved tool list and a record file without snapshot, or
    /// from a package (--npm/--pypi), its facts read from the installed package.
    Add(Box<AddArgs>),
    /// Create or update records from an MCP registry API (v0/servers).
    ImportRegistry(ImportArgs),
}

/// `mcprisk catalog add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The record's facts (YAML, the record format without `snapshot`); with --npm/--pypi
    /// optional (the facts then come from the installed package's own files).
    #[arg(long, value_name = "FILE")]
    pub record: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// What was run, e.g. "npm @modelcontextprotocol/server-memory@2026.8.31" (default: the
    /// record's first package).
    #[arg(long, value_name = "TEXT")]
    pub source: Option<String>,
    /// A `scan --format json` of the same server, for its serverInfo and protocol version when
    /// the snapshot comes from --tools.
    #[arg(long, value_name = "FILE")]
    pub from_scan: Option<String>,
    /// Where to write the record.
    #[arg(long, value_name = "DIR", default_value = "catalog/servers")]
    pub dir: String,
    /// Replace an existing record file (a symbolic link there is replaced, never followed).
    #[arg(long)]
    pub force: bool,
    #[arg(short, long)]
    pub quiet: bool,
}

/// `mcprisk catalog import-registry`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The registry's base URL (its API lives under v0/servers).
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// Where to write records.
    #[arg(long, value_name = "DIR", default_value = "catalog/servers")]
    pub dir: String,
    /// Most pages to read.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_pages: usize,
    /// Bound on each request, from connecting to the last byte of its body, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
    #[arg(short, long)]
    pub quiet: bool,
}

/// Where the tool lists come from. Several targets may be combined; each is one server.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// A saved tools/list result, a bare array of tools, or a JSON-RPC response ("-" reads stdin).
    #[arg(long, value_name = "FILE")]
    pub tools: Vec<String>,
    /// Start a server over stdio with this command line (explicit consent to run it).
    #[arg(long, value_name = "\"CMD ARGS\"")]
    pub stdio: Vec<String>,
    /// Connect to a remote server (streamable HTTP, falling back to HTTP+SSE).
    #[arg(long, value_name = "URL")]
    pub url: Vec<String>,
    /// A header for every --url, 'Name: value' (values are never printed, but a command line
    /// is visible to other users in `ps`: pass tokens with --header-env).
    #[arg(long = "header", value_name = "'K: V'")]
    pub headers: Vec<String>,
    /// A header for every --url whose value is the environment variable VAR, e.g.
    /// --header-env Authorization=MCP_AUTH with MCP_AUTH='Bearer ...' (never printed).
    #[arg(long = "header-env", value_name = "NAME=VAR")]
    pub header_env: Vec<String>,
    /// Every server an MCP client config declares (Claude Desktop, Claude Code, Cursor, VS Code,
    /// Windsurf, Gemini CLI, Codex). Starting its commands, or sending environment values it
    /// names (${VAR}) to a remote host, is asked for first (see --yes).
    #[arg(long, value_name = "FILE")]
    pub config: Vec<String>,
    /// The current user's client configs, from each client's well-known places.
    #[arg(long)]
    pub discover: bool,
    /// A server from the catalog, by id, alias, package name or a close spelling.
    #[arg(long, value_name = "NAME")]
    pub server: Vec<String>,
    /// More catalog records (a directory of YAML files; also MCPRISK_CATALOG).
    #[arg(long = "catalog", value_name = "DIR")]
    pub catalog_dirs: Vec<String>,
    /// Start the servers of config files, and send the environment values they put in a remote
    /// server's URL or headers, without asking (the listing shows every command line whole,
    /// secrets masked).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Bound on each server's whole scan, in seconds, also for a server that stops reading or
    /// floods requests. A tool list is capped at 64 MiB in all (32 MiB a message): past it the
    /// scan is an error that keeps the tools read.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
    /// Bound on a stdio or remote server's start-up, from launch until it answers `initialize`,
    /// in seconds (default 20, never more than --timeout): for a server that loads a large tool
    /// set before it answers.
    #[arg(long, value_name = "SECONDS")]
    pub startup_timeout: Option<f64>,
    /// How many servers to scan at once.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub jobs: usize,
    /// Save exactly what the server sent (its tools/list result) to FILE, for --tools later.
    #[arg(long, value_name = "FILE")]
    pub save_tools: Option<String>,
    /// The server's name in reports and policies (one target only; default: derived).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Install this npm package (NAME@VERSION to pin it) into mcprisk's cache and start its
    /// server over stdio (naming it is consent to run it).
    #[arg(long, value_name = "NAME[@VERSION]")]
    pub npm: Vec<String>,
    /// Install this PyPI package (NAME==VERSION to pin it) into a venv in mcprisk's cache and
    /// start its server over stdio (naming it is consent to run it).
    #[arg(long, value_name = "NAME[==VERSION]")]
    pub pypi: Vec<String>,
    /// With --npm/--pypi: the bin entry or console script to start, when there are several.
    #[arg(long, value_name = "NAME")]
    pub bin: Option<String>,
    /// With --npm/--pypi: one argument for the server (repeat for more; --arg=--flag).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// With --npm/--pypi: an environment variable for the server, e.g. a placeholder credential
    /// (values are never printed).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// With --pypi: the Python to create a new venv with (3.12, python3.12 or a path); an
    /// install made with another Python is not reused for it.
    #[arg(long, value_name = "PYTHON")]
    pub python: Option<String>,
    /// With --pypi: one more requirement to install alongside the package, as `uvx --with` has
    /// it (repeat for more), e.g. --with 'mcp<2' for a server whose unbounded dependency now
    /// resolves to a release it cannot run with. Part of the install's identity, and written
    /// into a catalog record's command and snapshot source.
    #[arg(long = "with", value_name = "REQUIREMENT")]
    pub with: Vec<String>,
    /// With --npm/--pypi: remove the install afterwards (by default it is kept for next time).
    #[arg(long)]
    pub no_keep: bool,
    /// Start stdio servers without network (a network namespace of their own: unshare -n).
    #[arg(long)]
    pub no_network: bool,
    /// A server command line to start over stdio (everything after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Options that shape the assessment.
#[derive(Debug, Args)]
pub struct AssessArgs {
    /// Use this rules file instead of the built-in catalog/rules.yaml.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<String>,
    /// How strict the recommended rules are (default: the settings file's, else balanced).
    #[arg(long, value_enum, ignore_case = true)]
    pub profile: Option<Profile>,
    /// Repository settings: ignores, thresholds, profile (default: ./.mcprisk.yaml if present).
    #[arg(long, value_name = "FILE")]
    pub settings: Option<String>,
    /// Report only what is new since this saved run (a scan or check --format json output).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<String>,
    /// Calls per minute for a rate-limited category, e.g. --limit write=20 --limit execute=5.
    #[arg(long = "limit", value_name = "CATEGORY=N")]
    pub limits: Vec<String>,
}

/// Output options shared by commands.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Write to this file (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,
    /// When to colour the terminal table (NO_COLOR is honoured).
    #[arg(long, value_enum, ignore_case = true, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Print nothing on standard error but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `mcprisk scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub assess: AssessArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Report format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Format::Table)]
    pub format: Format,
    /// Exit 1 when a tool or finding is at or above this severity.
    #[arg(long, value_name = "SEVERITY", value_parser = parse_severity)]
    pub fail_on: Option<Severity>,
    /// Use report templates from this directory (report.md.j2, report.html.j2).
    #[arg(long, value_name = "DIR")]
    pub templates: Option<String>,
    /// Pin what every server offers now in this lock file (for `mcprisk check --lock`); a server
    /// that fails keeps the entry it had.
    #[arg(long, value_name = "FILE")]
    pub lock: Option<String>,
}

/// `mcprisk check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub assess: AssessArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Report what moved since this lock file (never written by check).
    #[arg(long, value_name = "FILE")]
    pub lock: Option<String>,
    /// Report tools this policy does not cover, or covers more loosely than recommended.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<String>,
    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = CheckFormat::Table)]
    pub format: CheckFormat,
}

/// Formats of `mcprisk check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Table,
    Json,
    /// SARIF 2.1.0, located at the lock or policy file.
    Sarif,
    /// GitHub workflow annotations.
    Github,
    /// JUnit XML.
    Junit,
}

/// `mcprisk policy`.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub assess: AssessArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Policy format.
    #[arg(long, visible_alias = "format", value_enum, ignore_case = true, default_value_t = Flavor::Policylayer)]
    pub flavor: Flavor,
    /// Compare with the file at -o instead of writing it; exit 1 when they differ.
    #[arg(long)]
    pub check: bool,
    /// Overwrite hand-edited rules in the file at -o with the recommendation.
    #[arg(long)]
    pub reset: bool,
    /// Exit 1 when a tool or finding is at or above this severity.
    #[arg(long, value_name = "SEVERITY", value_parser = parse_severity)]
    pub fail_on: Option<Severity>,
}

/// `mcprisk rules`.
#[derive(Debug, Args)]
pub struct RulesArgs {
    /// A rule ID (e.g. MR-C304) to explain; all rules when absent.
    pub id: Option<String>,
    /// Use this rules file instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<String>,
    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = RulesFormat::Table)]
    pub format: RulesFormat,
}

/// Formats of `mcprisk rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    Table,
    Json,
}

fn parse_severity(s: &str) -> Result<Severity, String> {
    Severity::parse(s)
        .ok_or_else(|| format!("{s:?} is not a severity (low, medium, high, critical)"))
}
