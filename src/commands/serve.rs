//! `mcprisk serve [--http HOST:PORT]`: the catalog, the rules and assessments as an MCP server,
//! over stdio (the default) or streamable HTTP on a loopback address.

use crate::catalog::store;
use crate::cli::ServeArgs;
use crate::error::{Error, Result};
use crate::policy::Limits;
use crate::serve::{http, stdio, ServeOptions, Service};

/// Runs `serve` until the client closes standard input (stdio) or the process is ended (HTTP).
pub fn run(args: &ServeArgs) -> Result<u8> {
    let mut limits = Limits::default();
    for spec in &args.limits {
        limits.set(spec).map_err(Error::new)?;
    }
    let opts = ServeOptions {
        catalog_dirs: store::user_dirs(&args.catalog_dirs),
        profile: args.profile.unwrap_or_default(),
        limits,
    };
    let Some(addr) = &args.http else {
        let service = Service::new(&opts)?;
        stdio::serve(&service, std::io::stdin().lock(), std::io::stdout().lock())
            .map_err(|e| Error::new(format!("serve: {e}")))?;
        return Ok(0);
    };
    let addr = http::parse_addr(addr).map_err(|e| Error::new(format!("--http: {e}")))?;
    if !addr.ip().is_loopback() && !args.allow_remote {
        return Err(Error::new(format!(
            "--http {addr}: not a loopback address. The server has no authentication, so it \
             listens on loopback (127.0.0.1, ::1) unless --allow-remote is given as well"
        )));
    }
    let service = Service::new(&opts)?;
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| Error::new(format!("--http {addr}: cannot listen: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::new(format!("--http {addr}: {e}")))?;
    eprintln!(
        "mcprisk: serving MCP (streamable HTTP) at http://{bound}{}",
        http::PATH
    );
    http::serve(service, listener, args.allow_remote)
        .map_err(|e| Error::new(format!("serve --http: {e}")))?;
    Ok(0)
}
