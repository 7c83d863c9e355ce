//! `-web.config.file`: TLS and basic authentication in the format of the
//! Prometheus exporter-toolkit's web config file, as process-exporter
//! reads it:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt        # relative to the config file's directory
//!   key_file: server.key
//!   client_auth_type: RequireAndVerifyClientCert   # optional
//!   client_ca_file: ca.crt
//!   min_version: TLS12           # TLS12 or TLS13
//! http_server_config:
//!   headers:
//!     Strict-Transport-Security: max-age=31536000
//! basic_auth_users:
//!   prometheus: $2y$10$...       # bcrypt hashes
//! ```
//!
//! TLS is served by `rustls` (its `ring` provider); the passwords are
//! checked with the `bcrypt` crate, each (user, password) pair's answer
//! kept (at most 100 of them), as the toolkit does, so a scrape does not
//! pay bcrypt's cost every time. What the toolkit offers and this server
//! cannot do as it means is refused by name when the file is read
//! (`cipher_suites`, `curve_preferences`, `client_allowed_sans`, TLS
//! 1.0 and 1.1, the client-auth types that take a certificate without
//! verifying it).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebConfigFile {
    tls_server_config: Option<TlsFile>,
    http_server_config: Option<HttpFile>,
    basic_auth_users: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    client_auth_type: Option<String>,
    client_ca_file: Option<PathBuf>,
    cipher_suites: Option<Vec<String>>,
    curve_preferences: Option<Vec<String>>,
    min_version: Option<String>,
    max_version: Option<String>,
    prefer_server_cipher_suites: Option<bool>,
    client_allowed_sans: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpFile {
    /// Accepted: this server speaks HTTP/1.1 (over TLS too), which every
    /// HTTP/2 client falls back to.
    #[allow(dead_code, reason = "read to be accepted; HTTP/1.1 is served")]
    http2: Option<bool>,
    headers: Option<BTreeMap<String, String>>,
}

/// What the server does with the file.
pub struct WebConfig {
    /// Serve TLS with this configuration.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Ask for one of these users.
    pub auth: Option<BasicAuth>,
    /// Added to every response.
    pub headers: Vec<(String, String)>,
}

impl WebConfig {
    /// Plain HTTP, no users, no headers (no `-web.config.file`).
    pub fn none() -> WebConfig {
        WebConfig {
            tls: None,
            auth: None,
            headers: Vec::new(),
        }
    }

    /// Read and check `path`; an error says what is wrong, with the
    /// file's name.
    pub fn load(path: &Path) -> Result<WebConfig> {
        let context = || format!("web config {}", path.display());
        let text = std::fs::read_to_string(path).with_context(context)?;
        let file: WebConfigFile = if text.trim().is_empty() {
            WebConfigFile::default()
        } else {
            serde_norway::from_str(&text).with_context(context)?
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        WebConfig::from_file(file, dir).with_context(context)
    }

    fn from_file(file: WebConfigFile, dir: &Path) -> Result<WebConfig> {
        let tls = file
            .tls_server_config
            .map(|t| tls_config(t, dir).map(Arc::new))
            .transpose()
            .context("tls_server_config")?;
        let auth = file
            .basic_auth_users
            .map(BasicAuth::new)
            .transpose()
            .context("basic_auth_users")?;
        let headers = file
            .http_server_config
            .and_then(|h| h.headers)
            .unwrap_or_default()
            .into_iter()
            .map(|(name, value)| check_header(&name, &value).map(|()| (name, value)))
            .collect::<Result<Vec<_>>>()
            .context("http_server_config: headers")?;
        Ok(WebConfig { tls, auth, headers })
    }
}

/// The toolkit's headers, and the values it allows for two of them.
fn check_header(name: &str, value: &str) -> Result<()> {
    const ALLOWED: [&str; 5] = [
        "Strict-Transport-Security",
        "X-Content-Type-Options",
        "X-Frame-Options",
        "X-XSS-Protection",
        "Content-Security-Policy",
    ];
    if !ALLOWED.contains(&name) {
        bail!("{name} cannot be set (one of {})", ALLOWED.join(", "));
    }
    let ok = match name {
        "X-Content-Type-Options" => value == "nosniff",
        "X-Frame-Options" => matches!(value.to_ascii_lowercase().as_str(), "deny" | "sameorigin"),
        _ => !value.contains(['\r', '\n']),
    };
    if !ok {
        bail!("{name}: invalid value {value:?}");
    }
    Ok(())
}

/// A path of the file, relative to its directory.
fn resolve(dir: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

fn tls_version(name: &str) -> Result<&'static rustls::SupportedProtocolVersion> {
    match name {
        "TLS13" => Ok(&rustls::version::TLS13),
        "TLS12" => Ok(&rustls::version::TLS12),
        "TLS10" | "TLS11" => bail!("{name} is not supported: rustls serves TLS12 and TLS13"),
        _ => bail!("unknown TLS version {name:?} (TLS12 or TLS13)"),
    }
}

fn tls_config(t: TlsFile, dir: &Path) -> Result<rustls::ServerConfig> {
    for (given, name) in [
        (t.cipher_suites.is_some(), "cipher_suites"),
        (t.curve_preferences.is_some(), "curve_preferences"),
        (t.client_allowed_sans.is_some(), "client_allowed_sans"),
    ] {
        if given {
            bail!("{name} is not supported: rustls chooses among its own safe defaults");
        }
    }
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = {
        let min = t.min_version.as_deref().map(tls_version).transpose()?;
        let max = t.max_version.as_deref().map(tls_version).transpose()?;
        let rank = |v: &rustls::SupportedProtocolVersion| {
            u8::from(v.version == rustls::ProtocolVersion::TLSv1_3)
        };
        let all = [&rustls::version::TLS12, &rustls::version::TLS13];
        let chosen: Vec<_> = all
            .into_iter()
            .filter(|v| min.is_none_or(|m| rank(v) >= rank(m)))
            .filter(|v| max.is_none_or(|m| rank(v) <= rank(m)))
            .collect();
        if chosen.is_empty() {
            bail!("min_version is above max_version");
        }
        chosen
    };
    let cert_file = t.cert_file.ok_or_else(|| anyhow!("cert_file is missing"))?;
    let key_file = t.key_file.ok_or_else(|| anyhow!("key_file is missing"))?;
    let cert_file = resolve(dir, &cert_file);
    let key_file = resolve(dir, &key_file);
    let certs = CertificateDer::pem_file_iter(&cert_file)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| anyhow!("cert_file {}: {e}", cert_file.display()))?;
    if certs.is_empty() {
        bail!("cert_file {}: no certificate in it", cert_file.display());
    }
    let key = PrivateKeyDer::from_pem_file(&key_file)
        .map_err(|e| anyhow!("key_file {}: {e}", key_file.display()))?;

    // Named here rather than installed process-wide, so no builder can
    // find none. rustls marks ring's provider deprecated for its lack of
    // post-quantum key exchange; aws-lc-rs, which has it, is a C and
    // assembly build this exporter does not otherwise need.
    #[allow(
        deprecated,
        reason = "ring: no C build beyond cc; post-quantum key exchange is not needed to serve metrics"
    )]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .context("TLS versions")?;

    let client_auth = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
    let builder = match client_auth {
        "" | "NoClientCert" => {
            if t.client_ca_file.is_some() {
                bail!("client_ca_file is set but client_auth_type {client_auth:?} does not verify client certificates");
            }
            builder.with_no_client_auth()
        }
        "RequireAndVerifyClientCert" | "VerifyClientCertIfGiven" => {
            let ca_file = t
                .client_ca_file
                .ok_or_else(|| anyhow!("client_auth_type {client_auth} needs client_ca_file"))?;
            let ca_file = resolve(dir, &ca_file);
            let mut roots = rustls::RootCertStore::empty();
            let cas = CertificateDer::pem_file_iter(&ca_file)
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map_err(|e| anyhow!("client_ca_file {}: {e}", ca_file.display()))?;
            for ca in cas {
                roots
                    .add(ca)
                    .map_err(|e| anyhow!("client_ca_file {}: {e}", ca_file.display()))?;
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if client_auth == "VerifyClientCertIfGiven" {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|e| anyhow!("client_ca_file {}: {e}", ca_file.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
        "RequestClientCert" | "RequireAnyClientCert" => bail!(
            "client_auth_type {client_auth} is not supported: it takes a client certificate without \
             verifying it (use RequireAndVerifyClientCert or VerifyClientCertIfGiven with client_ca_file)"
        ),
        other => bail!("unknown client_auth_type {other:?}"),
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| {
        anyhow!(
            "cert_file {} and key_file {}: {e}",
            cert_file.display(),
            key_file.display()
        )
    })?;
    // The toolkit prefers the server's order unless told otherwise.
    config.ignore_client_order = t.prefer_server_cipher_suites.unwrap_or(true);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// A bcrypt hash of no password anyone knows, checked for a user that
/// does not exist so that the answer takes as long as for one that does
/// (the toolkit's).
const UNKNOWN_USER_HASH: &str = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

/// The users and their bcrypt hashes.
pub struct BasicAuth {
    users: BTreeMap<String, String>,
    /// What bcrypt said for each (user, password) pair asked lately.
    answers: Mutex<HashMap<(String, Vec<u8>), bool>>,
}

impl BasicAuth {
    fn new(users: BTreeMap<String, String>) -> Result<BasicAuth> {
        for (user, hash) in &users {
            hash.parse::<bcrypt::HashParts>()
                .map_err(|e| anyhow!("user {user:?}: not a bcrypt hash: {e}"))?;
        }
        Ok(BasicAuth {
            users,
            answers: Mutex::new(HashMap::new()),
        })
    }

    /// Whether an `Authorization` header names a user with its password.
    pub fn allows(&self, authorization: Option<&str>) -> bool {
        let Some((user, password)) = authorization.and_then(basic_credentials) else {
            return false;
        };
        let key = (user, password);
        let answers = || self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&known) = answers().get(&key) {
            return known;
        }
        let (hash, known_user) = match self.users.get(&key.0) {
            Some(hash) => (hash.as_str(), true),
            None => (UNKNOWN_USER_HASH, false),
        };
        let ok = known_user && bcrypt::verify(&key.1, hash).unwrap_or(false);
        let mut answers = answers();
        if answers.len() >= 100 {
            answers.clear();
        }
        answers.insert(key, ok);
        ok
    }
}

/// The user and password of a `Basic` authorization header.
fn basic_credentials(header: &str) -> Option<(String, Vec<u8>)> {
    let (scheme, encoded) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    let user = String::from_utf8(decoded[..colon].to_vec()).ok()?;
    Some((user, decoded[colon + 1..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(yaml: &str) -> Result<WebConfig> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.yml");
        std::fs::write(&path, yaml).unwrap();
        WebConfig::load(&path).map_err(|e| anyhow!("{e:#}"))
    }

    #[test]
    fn basic_auth_checks_the_password_and_remembers_the_answer() {
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let web = load(&format!("basic_auth_users:\n  alice: '{hash}'\n")).unwrap();
        assert!(web.tls.is_none());
        let auth = web.auth.unwrap();
        let header = |user: &str, password: &str| {
            let b64 =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            format!("Basic {b64}")
        };
        assert!(auth.allows(Some(&header("alice", "s3cret"))));
        assert!(
            auth.allows(Some(&header("alice", "s3cret"))),
            "from the kept answer"
        );
        assert!(!auth.allows(Some(&header("alice", "wrong"))));
        assert!(!auth.allows(Some(&header("bob", "s3cret"))));
        assert!(!auth.allows(Some("Bearer abc")));
        assert!(!auth.allows(Some("Basic !!!")));
        assert!(!auth.allows(None));
        assert_eq!(auth.answers.lock().unwrap().len(), 3);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let cases = [
            ("nonsense: 1\n", "unknown field `nonsense`"),
            ("basic_auth_users:\n  alice: plain\n", "user \"alice\": not a bcrypt hash"),
            ("tls_server_config:\n  key_file: k.pem\n", "cert_file is missing"),
            (
                "tls_server_config:\n  cert_file: nope.pem\n  key_file: k.pem\n",
                "cert_file ",
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
                "cipher_suites is not supported",
            ),
            (
                "http_server_config:\n  headers:\n    Server: me\n",
                "Server cannot be set",
            ),
            (
                "http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
                "X-Frame-Options: invalid value",
            ),
        ];
        for (yaml, expected) in cases {
            let e = load(yaml).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(expected), "{yaml:?}: {e:?}");
            assert!(e.starts_with("web config "), "{e}");
            assert!(!e.contains('\n'), "one line: {e:?}");
        }
        assert!(load("").is_ok_and(|w| w.tls.is_none() && w.auth.is_none()));
    }
}
