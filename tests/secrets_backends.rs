//! The secret backends against real local peers the tests start themselves:
//! AWS Secrets Manager on moto (`moto_server`, signatures checked after the
//! first N calls), Vault's API on OpenBao (`bao server -dev`), OpenClaw's exec
//! protocol with real `python3` helpers, `${VAR}` substitution and SecretRef
//! objects. GCP Secret Manager runs against a FAKE written here (see
//! `mod gcp_fake`): no emulator for it exists in the reachable registries.
//!
//! Every peer runs on 127.0.0.1 on a free port, is waited for with a bounded
//! deadline, and is killed by a guard (`common::Peer`) when the test ends,
//! failed or not.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use common::*;
use openclaw_mcp_native::config::validate_mcp_config;
use openclaw_mcp_native::secrets::aws::{AwsCredentials, sigv4_headers};
use openclaw_mcp_native::secrets::{
    EnvSource, ExposeSecret, ProviderDefinitions, Redactor, SecretError, SecretResolver,
    SecretString,
};
use serde_json::json;

// ---------------------------------------------------------------- helpers

fn resolver(env: &[(&str, &str)]) -> SecretResolver {
    SecretResolver::with_default_providers_in(EnvSource::fixed(env.iter().copied()))
}

async fn resolve(env: &[(&str, &str)], value: &str) -> Result<String, SecretError> {
    resolver(env)
        .resolve(value)
        .await
        .map(|s| s.expose_secret().to_owned())
}

/// Asserts `err` is a provider error for `uri` whose text contains every `needle` and
/// none of `forbidden`.
fn assert_error(err: &SecretError, uri: &str, needles: &[&str], forbidden: &[&str]) {
    let text = err.to_string();
    assert_eq!(err.uri(), uri, "{text}");
    assert!(text.contains(uri), "the error names the reference: {text}");
    for n in needles {
        assert!(text.contains(n), "expected {n:?} in: {text}");
    }
    for f in forbidden {
        assert!(!text.contains(f), "{f:?} must not appear in: {text}");
    }
}

// ---------------------------------------------------------------- moto (AWS)

/// Calls made by `aws_setup` before moto starts checking signatures.
const MOTO_FREE_CALLS: u32 = 11;

const PLAIN_VALUE: &str = "aws-plain-S3cr3t/+=value";
const JSON_PASSWORD: &str = "db-pa$$word \"quoted\" ü";
const BINARY_VALUE: &str = "binary-but-utf8 ✓ value";

struct Moto {
    _peer: Peer,
    url: String,
}

async fn start_moto(free_calls: Option<u32>) -> Moto {
    let port = free_port();
    let program = std::env::var("MOTO_SERVER").unwrap_or_else(|_| "moto_server".to_owned());
    let count = free_calls.map(|n| n.to_string());
    let mut envs: Vec<(&str, &str)> = vec![("AWS_EC2_METADATA_DISABLED", "true")];
    if let Some(c) = &count {
        envs.push(("INITIAL_NO_AUTH_ACTION_COUNT", c.as_str()));
    }
    let mut peer = Peer::spawn(
        "moto",
        &program,
        &[
            "-H".into(),
            "127.0.0.1".into(),
            "-p".into(),
            port.to_string(),
        ],
        &envs,
        port,
    );
    // TCP only: an HTTP probe would use up one of the free calls.
    peer.wait_tcp(Duration::from_secs(30)).await;
    Moto {
        _peer: peer,
        url: format!("http://127.0.0.1:{port}"),
    }
}

fn creds(id: &str, secret: &str, token: Option<&str>) -> AwsCredentials {
    AwsCredentials {
        access_key_id: id.to_owned(),
        secret_access_key: SecretString::from(secret),
        session_token: token.map(SecretString::from),
    }
}

fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            let enc: String = v
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            format!("{k}={enc}")
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// One request signed with our own SigV4 implementation. `target`: JSON 1.1 API
/// (`X-Amz-Target`), else the query API (form body).
async fn aws_call(
    url: &str,
    service: &str,
    target: Option<&str>,
    body: &str,
    c: &AwsCredentials,
) -> (u16, String) {
    let parsed = reqwest::Url::parse(&format!("{url}/")).unwrap();
    let content_type = if target.is_some() {
        "application/x-amz-json-1.1"
    } else {
        "application/x-www-form-urlencoded; charset=utf-8"
    };
    let mut headers = vec![("content-type", content_type)];
    if let Some(t) = target {
        headers.push(("x-amz-target", t));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let signed = sigv4_headers(
        "POST",
        &parsed,
        &headers,
        body.as_bytes(),
        "us-east-1",
        service,
        c,
        now,
    );
    let mut req = reqwest::Client::new().post(parsed).body(body.to_owned());
    for (k, v) in headers {
        req = req.header(k, v);
    }
    for (k, v) in signed {
        req = req.header(k, v);
    }
    let resp = req.send().await.expect("moto request");
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap_or_default())
}

fn xml_tag(text: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("<{tag}> in {text}"))
        + open.len();
    let end = text[start..].find(&format!("</{tag}>")).unwrap() + start;
    text[start..end].to_owned()
}

struct AwsSetup {
    reader: AwsCredentials,
    nobody: AwsCredentials,
    plain_arn: String,
}

/// The first `MOTO_FREE_CALLS` calls: users, keys, policies, a role and the secrets.
async fn aws_setup(url: &str) -> AwsSetup {
    let boot = creds("AKIABOOTSTRAP0000000", "bootstrap", None);
    let iam = |pairs: Vec<(&'static str, String)>| {
        let boot = boot.clone();
        async move {
            let mut all: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            all.push(("Version", "2010-05-08"));
            let (status, text) = aws_call(url, "iam", None, &form(&all), &boot).await;
            assert_eq!(status, 200, "{text}");
            text
        }
    };
    let allow_all = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}).to_string();
    iam(vec![
        ("Action", "CreateUser".into()),
        ("UserName", "reader".into()),
    ])
    .await; // 1
    let key = iam(vec![
        ("Action", "CreateAccessKey".into()),
        ("UserName", "reader".into()),
    ])
    .await; // 2
    let reader = creds(
        &xml_tag(&key, "AccessKeyId"),
        &xml_tag(&key, "SecretAccessKey"),
        None,
    );
    iam(vec![
        ("Action", "PutUserPolicy".into()),
        ("UserName", "reader".into()),
        ("PolicyName", "all".into()),
        ("PolicyDocument", allow_all.clone()),
    ])
    .await; // 3
    iam(vec![
        ("Action", "CreateUser".into()),
        ("UserName", "nobody".into()),
    ])
    .await; // 4
    let key = iam(vec![
        ("Action", "CreateAccessKey".into()),
        ("UserName", "nobody".into()),
    ])
    .await; // 5
    let nobody = creds(
        &xml_tag(&key, "AccessKeyId"),
        &xml_tag(&key, "SecretAccessKey"),
        None,
    );
    let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:user/reader"}, "Action": "sts:AssumeRole"}]}).to_string();
    iam(vec![
        ("Action", "CreateRole".into()),
        ("RoleName", "secret-reader".into()),
        ("AssumeRolePolicyDocument", trust),
    ])
    .await; // 6
    let read_only = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "secretsmanager:GetSecretValue", "Resource": "*"}]}).to_string();
    iam(vec![
        ("Action", "PutRolePolicy".into()),
        ("RoleName", "secret-reader".into()),
        ("PolicyName", "read".into()),
        ("PolicyDocument", read_only),
    ])
    .await; // 7

    let create = |body: serde_json::Value| {
        let boot = boot.clone();
        async move {
            let (status, text) = aws_call(
                url,
                "secretsmanager",
                Some("secretsmanager.CreateSecret"),
                &body.to_string(),
                &boot,
            )
            .await;
            assert_eq!(status, 200, "{text}");
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        }
    };
    let plain = create(json!({"Name": "app/plain", "SecretString": PLAIN_VALUE})).await; // 8
    create(json!({"Name": "app/json", "SecretString": json!({"username": "svc", "password": JSON_PASSWORD, "port": 5432}).to_string()})).await; // 9
    create(json!({"Name": "app/binary", "SecretBinary": STANDARD.encode(BINARY_VALUE)})).await; // 10
    create(
        json!({"Name": "app/not-utf8", "SecretBinary": STANDARD.encode([0xff, 0xfe, 0x00, 0x80])}),
    )
    .await; // 11
    AwsSetup {
        reader,
        nobody,
        plain_arn: plain["ARN"].as_str().unwrap().to_owned(),
    }
}

fn aws_env<'a>(url: &'a str, home: &'a str, c: &'a AwsCredentials) -> Vec<(&'a str, &'a str)> {
    let mut env = vec![
        ("AWS_ACCESS_KEY_ID", c.access_key_id.as_str()),
        ("AWS_SECRET_ACCESS_KEY", c.secret_access_key.expose_secret()),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL_SECRETS_MANAGER", url),
        ("AWS_EC2_METADATA_DISABLED", "true"),
        ("HOME", home),
    ];
    if let Some(t) = &c.session_token {
        env.push(("AWS_SESSION_TOKEN", t.expose_secret()));
    }
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_values_resolve_with_checked_signatures() {
    let moto = start_moto(Some(MOTO_FREE_CALLS)).await;
    let setup = aws_setup(&moto.url).await;
    let home = temp_dir("aws-home");
    let home_s = home.display().to_string();
    let env = aws_env(&moto.url, &home_s, &setup.reader);

    // Signature checking is live: the bootstrap key no longer works.
    let (status, _) = aws_call(
        &moto.url,
        "secretsmanager",
        Some("secretsmanager.GetSecretValue"),
        r#"{"SecretId":"app/plain"}"#,
        &creds("AKIABOOTSTRAP0000000", "bootstrap", None),
    )
    .await;
    assert_eq!(status, 403, "moto must be checking signatures by now");

    assert_eq!(
        resolve(&env, "secret://aws/app/plain").await.unwrap(),
        PLAIN_VALUE
    );
    assert_eq!(
        resolve(&env, "secret://aws/app/json#password")
            .await
            .unwrap(),
        JSON_PASSWORD
    );
    assert_eq!(
        resolve(&env, "secret://aws/app/json#port").await.unwrap(),
        "5432"
    );
    assert_eq!(
        resolve(&env, "secret://aws/app/binary").await.unwrap(),
        BINARY_VALUE
    );
    // By ARN: the region comes from the ARN (AWS_REGION removed).
    let no_region: Vec<_> = env
        .iter()
        .copied()
        .filter(|(k, _)| *k != "AWS_REGION")
        .collect();
    assert_eq!(
        resolve(&no_region, &format!("secret://aws/{}", setup.plain_arn))
            .await
            .unwrap(),
        PLAIN_VALUE
    );

    // Credentials and region from the shared files of a named profile.
    let creds_file = home.join("creds");
    let config_file = home.join("config");
    std::fs::write(
        &creds_file,
        format!(
            "[default]\naws_access_key_id = AKIAWRONG\naws_secret_access_key = wrong\n\n[reader]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            setup.reader.access_key_id,
            setup.reader.secret_access_key.expose_secret()
        ),
    )
    .unwrap();
    std::fs::write(&config_file, "[profile reader]\nregion = us-east-1\n").unwrap();
    let creds_s = creds_file.display().to_string();
    let config_s = config_file.display().to_string();
    let profile_env = [
        ("AWS_PROFILE", "reader"),
        ("AWS_SHARED_CREDENTIALS_FILE", creds_s.as_str()),
        ("AWS_CONFIG_FILE", config_s.as_str()),
        ("AWS_ENDPOINT_URL", moto.url.as_str()),
        ("AWS_EC2_METADATA_DISABLED", "true"),
        ("HOME", home_s.as_str()),
    ];
    assert_eq!(
        resolve(&profile_env, "secret://aws/app/plain")
            .await
            .unwrap(),
        PLAIN_VALUE
    );

    // Several references in one start: all resolve, in parallel, keys kept.
    let all = resolver(&env)
        .resolve_all(&[
            ("A".into(), "secret://aws/app/plain".into()),
            ("B".into(), "secret://aws/app/json#username".into()),
            ("C".into(), "secret://aws/app/plain".into()),
        ])
        .await
        .unwrap();
    let got: Vec<(&str, &str)> = all
        .iter()
        .map(|(k, v)| (k.as_str(), v.expose_secret()))
        .collect();
    assert_eq!(got, [("A", PLAIN_VALUE), ("B", "svc"), ("C", PLAIN_VALUE)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_failures_are_clear_and_never_echo_a_body() {
    let moto = start_moto(Some(MOTO_FREE_CALLS)).await;
    let setup = aws_setup(&moto.url).await;
    let home = temp_dir("aws-fail-home");
    let home_s = home.display().to_string();
    let good = aws_env(&moto.url, &home_s, &setup.reader);

    // A wrong secret key: 403 SignatureDoesNotMatch, without moto's message text.
    let wrong = creds(&setup.reader.access_key_id, "not-the-key", None);
    let env = aws_env(&moto.url, &home_s, &wrong);
    let e = resolve(&env, "secret://aws/app/plain").await.unwrap_err();
    assert_error(
        &e,
        "secret://aws/app/plain",
        &["answered 403 (SignatureDoesNotMatch)"],
        &["signature we calculated", "<", "not-the-key"],
    );

    // An unknown key id.
    let unknown = creds("AKIAUNKNOWN000000000", "x", None);
    let e = resolve(
        &aws_env(&moto.url, &home_s, &unknown),
        "secret://aws/app/plain",
    )
    .await
    .unwrap_err();
    assert_error(
        &e,
        "secret://aws/app/plain",
        &["answered 403 (InvalidClientTokenId)"],
        &["<"],
    );

    // A valid user without a policy: denied.
    let e = resolve(
        &aws_env(&moto.url, &home_s, &setup.nobody),
        "secret://aws/app/plain",
    )
    .await
    .unwrap_err();
    assert_error(
        &e,
        "secret://aws/app/plain",
        &["answered 403 (AccessDenied"],
        &["not authorized", "<"],
    );

    // Not found.
    let e = resolve(&good, "secret://aws/app/missing")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://aws/app/missing",
        &["(ResourceNotFoundException)"],
        &["can't find", "Secrets Manager can"],
    );

    // Field errors name the field, never the content.
    let e = resolve(&good, "secret://aws/app/json#nope")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://aws/app/json#nope",
        &["field 'nope' not found"],
        &[JSON_PASSWORD, "svc"],
    );
    let e = resolve(&good, "secret://aws/app/plain#field")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://aws/app/plain#field",
        &["not JSON"],
        &[PLAIN_VALUE],
    );

    // Binary that is not UTF-8.
    let e = resolve(&good, "secret://aws/app/not-utf8")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://aws/app/not-utf8",
        &["SecretBinary (4 bytes) is not UTF-8"],
        &[],
    );

    // No region anywhere (a plain name, no AWS_REGION, no profile).
    let no_region: Vec<_> = good
        .iter()
        .copied()
        .filter(|(k, _)| *k != "AWS_REGION")
        .collect();
    let e = resolve(&no_region, "secret://aws/app/plain")
        .await
        .unwrap_err();
    assert_error(&e, "secret://aws/app/plain", &["no AWS region"], &[]);

    // No credentials anywhere (instance metadata disabled).
    let none = [
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", moto.url.as_str()),
        ("AWS_EC2_METADATA_DISABLED", "true"),
        ("HOME", home_s.as_str()),
    ];
    let e = resolve(&none, "secret://aws/app/plain").await.unwrap_err();
    assert_error(
        &e,
        "secret://aws/app/plain",
        &["no AWS credentials found", "AWS_EC2_METADATA_DISABLED"],
        &[],
    );

    // Nothing listening: a connection error, quickly.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let dead_env = [
        ("AWS_ACCESS_KEY_ID", "AKIA"),
        ("AWS_SECRET_ACCESS_KEY", "k"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", dead.as_str()),
        ("HOME", home_s.as_str()),
    ];
    let e = resolve(&dead_env, "secret://aws/x").await.unwrap_err();
    assert_error(
        &e,
        "secret://aws/x",
        &["not reachable", "connection failed"],
        &[],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_assume_role_session_credentials() {
    let moto = start_moto(Some(MOTO_FREE_CALLS)).await;
    let setup = aws_setup(&moto.url).await;
    let body = form(&[
        ("Action", "AssumeRole"),
        ("RoleArn", "arn:aws:iam::123456789012:role/secret-reader"),
        ("RoleSessionName", "mcp-native-test"),
        ("Version", "2011-06-15"),
    ]);
    let (status, text) = aws_call(&moto.url, "sts", None, &body, &setup.reader).await;
    assert_eq!(status, 200, "{text}");
    let session = creds(
        &xml_tag(&text, "AccessKeyId"),
        &xml_tag(&text, "SecretAccessKey"),
        Some(&xml_tag(&text, "SessionToken")),
    );
    let home = temp_dir("aws-role-home");
    let home_s = home.display().to_string();
    let env = aws_env(&moto.url, &home_s, &session);
    assert!(env.iter().any(|(k, _)| *k == "AWS_SESSION_TOKEN"));
    assert_eq!(
        resolve(&env, "secret://aws/app/plain").await.unwrap(),
        PLAIN_VALUE
    );

    // Without the session token the temporary key is refused.
    let without: Vec<_> = env
        .iter()
        .copied()
        .filter(|(k, _)| *k != "AWS_SESSION_TOKEN")
        .collect();
    let e = resolve(&without, "secret://aws/app/plain")
        .await
        .unwrap_err();
    assert_error(&e, "secret://aws/app/plain", &["answered 403"], &["<"]);
}

/// Container and instance-metadata credentials, against moto's own IMDS endpoints
/// (`/latest/api/token`, `/latest/meta-data/iam/security-credentials/…`). This moto
/// does not check signatures (its IMDS hands out keys IAM does not know), so these
/// tests prove where the credentials came from by removing every other source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_container_and_instance_metadata_credentials() {
    let moto = start_moto(None).await;
    let (status, text) = aws_call(
        &moto.url,
        "secretsmanager",
        Some("secretsmanager.CreateSecret"),
        &json!({"Name": "meta/s", "SecretString": "from-metadata-creds"}).to_string(),
        &creds("AKIAANY", "any", None),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let home = temp_dir("aws-meta-home");
    let home_s = home.display().to_string();
    let base = [
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL_SECRETS_MANAGER", moto.url.as_str()),
        ("HOME", home_s.as_str()),
    ];

    // IMDSv2 through AWS_EC2_METADATA_SERVICE_ENDPOINT.
    let mut imds: Vec<_> = base.to_vec();
    imds.push(("AWS_EC2_METADATA_SERVICE_ENDPOINT", moto.url.as_str()));
    assert_eq!(
        resolve(&imds, "secret://aws/meta/s").await.unwrap(),
        "from-metadata-creds"
    );
    // Disabled: the same setup finds no credentials.
    let mut disabled = imds.clone();
    disabled.push(("AWS_EC2_METADATA_DISABLED", "true"));
    let e = resolve(&disabled, "secret://aws/meta/s").await.unwrap_err();
    assert_error(
        &e,
        "secret://aws/meta/s",
        &["no AWS credentials found"],
        &[],
    );
    // An endpoint that is not there: a clear failure naming it.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let mut dead_imds: Vec<_> = base.to_vec();
    dead_imds.push(("AWS_EC2_METADATA_SERVICE_ENDPOINT", dead.as_str()));
    let e = resolve(&dead_imds, "secret://aws/meta/s")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://aws/meta/s",
        &["instance metadata at", &dead],
        &[],
    );

    // Container credentials (full URI + authorization token); they win over IMDS.
    let full = format!(
        "{}/latest/meta-data/iam/security-credentials/default-role",
        moto.url
    );
    let mut container: Vec<_> = base.to_vec();
    container.push(("AWS_CONTAINER_CREDENTIALS_FULL_URI", full.as_str()));
    container.push(("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-auth-token"));
    container.push(("AWS_EC2_METADATA_DISABLED", "true"));
    assert_eq!(
        resolve(&container, "secret://aws/meta/s").await.unwrap(),
        "from-metadata-creds"
    );
    // A container URI that answers 404 is an error, not a fall-through.
    let wrong = format!("{}/latest/meta-data/nope", moto.url);
    let mut bad: Vec<_> = base.to_vec();
    bad.push(("AWS_CONTAINER_CREDENTIALS_FULL_URI", wrong.as_str()));
    let e = resolve(&bad, "secret://aws/meta/s").await.unwrap_err();
    assert_error(&e, "secret://aws/meta/s", &["container credentials"], &[]);
}

// ---------------------------------------------------------------- OpenBao (Vault API)

const KV2_PASSWORD: &str = "kv2-p@ss/word+äöü";
const KV1_TOKEN: &str = "kv1-token-value-123";
const NS_VALUE: &str = "namespaced-secret-value";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vault_kv_v1_v2_namespaces_and_failures_on_openbao() {
    use reqwest::Method;
    let (_bao, addr) = start_openbao(None).await;
    bao_call(
        &addr,
        Method::POST,
        "secret/data/app",
        Some(json!({"data": {"password": KV2_PASSWORD, "port": 5432, "nested": {"a": 1}}})),
        None,
    )
    .await;
    bao_call(
        &addr,
        Method::POST,
        "sys/mounts/kv1",
        Some(json!({"type": "kv", "options": {"version": "1"}})),
        None,
    )
    .await;
    bao_call(
        &addr,
        Method::POST,
        "kv1/service",
        Some(json!({"token": KV1_TOKEN})),
        None,
    )
    .await;
    bao_call(
        &addr,
        Method::POST,
        "sys/mounts/team/kv",
        Some(json!({"type": "kv", "options": {"version": "2"}})),
        None,
    )
    .await;
    bao_call(
        &addr,
        Method::POST,
        "team/kv/data/deep/app",
        Some(json!({"data": {"k": "multi-segment-mount"}})),
        None,
    )
    .await;

    let home = temp_dir("vault-home");
    let home_s = home.display().to_string();
    let env = [
        ("VAULT_ADDR", addr.as_str()),
        ("VAULT_TOKEN", BAO_ROOT_TOKEN),
        ("HOME", home_s.as_str()),
    ];
    // KV v2 (the dev server's default `secret/` mount), detected.
    assert_eq!(
        resolve(&env, "secret://vault/secret/app#password")
            .await
            .unwrap(),
        KV2_PASSWORD
    );
    assert_eq!(
        resolve(&env, "secret://vault/secret/app#port")
            .await
            .unwrap(),
        "5432"
    );
    assert_eq!(
        resolve(&env, "secret://vault/secret/app#nested")
            .await
            .unwrap(),
        r#"{"a":1}"#
    );
    // The API-style path works too.
    assert_eq!(
        resolve(&env, "secret://vault/secret/data/app#password")
            .await
            .unwrap(),
        KV2_PASSWORD
    );
    // KV v1.
    assert_eq!(
        resolve(&env, "secret://vault/kv1/service#token")
            .await
            .unwrap(),
        KV1_TOKEN
    );
    // A mount of two segments.
    assert_eq!(
        resolve(&env, "secret://vault/team/kv/deep/app#k")
            .await
            .unwrap(),
        "multi-segment-mount"
    );
    // Mixed in one resolver (the mount cache serves the second lookup of each mount).
    let r = resolver(&env);
    let all = r
        .resolve_all(&[
            ("A".into(), "secret://vault/secret/app#password".into()),
            ("B".into(), "secret://vault/kv1/service#token".into()),
        ])
        .await
        .unwrap();
    assert_eq!(all[0].1.expose_secret(), KV2_PASSWORD);
    assert_eq!(all[1].1.expose_secret(), KV1_TOKEN);
    assert_eq!(
        r.resolve("secret://vault/secret/app#port")
            .await
            .unwrap()
            .expose_secret(),
        "5432"
    );

    // The token file when VAULT_TOKEN is unset; OpenBao's BAO_ADDR spelling.
    std::fs::write(home.join(".vault-token"), format!("{BAO_ROOT_TOKEN}\n")).unwrap();
    let file_env = [("BAO_ADDR", addr.as_str()), ("HOME", home_s.as_str())];
    assert_eq!(
        resolve(&file_env, "secret://vault/kv1/service#token")
            .await
            .unwrap(),
        KV1_TOKEN
    );

    // Namespaces (open source in OpenBao ≥ 2.3): X-Vault-Namespace.
    bao_call(
        &addr,
        Method::POST,
        "sys/namespaces/team1",
        Some(json!({})),
        None,
    )
    .await;
    bao_call(
        &addr,
        Method::POST,
        "sys/mounts/nskv",
        Some(json!({"type": "kv", "options": {"version": "2"}})),
        Some("team1"),
    )
    .await;
    bao_call(
        &addr,
        Method::POST,
        "nskv/data/app",
        Some(json!({"data": {"v": NS_VALUE}})),
        Some("team1"),
    )
    .await;
    let mut ns_env = env.to_vec();
    ns_env.push(("VAULT_NAMESPACE", "team1"));
    assert_eq!(
        resolve(&ns_env, "secret://vault/nskv/app#v").await.unwrap(),
        NS_VALUE
    );
    let e = resolve(&env, "secret://vault/nskv/app#v")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://vault/nskv/app#v",
        &["answered 403"],
        &[NS_VALUE],
    );

    // Failures.
    let bad = [
        ("VAULT_ADDR", addr.as_str()),
        ("VAULT_TOKEN", "not-a-token"),
        ("HOME", home_s.as_str()),
    ];
    let e = resolve(&bad, "secret://vault/secret/app#password")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://vault/secret/app#password",
        &["answered 403 (permission denied)"],
        &[KV2_PASSWORD, "not-a-token"],
    );
    let e = resolve(&env, "secret://vault/secret/missing#password")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://vault/secret/missing#password",
        &["answered 404"],
        &[],
    );
    let e = resolve(&env, "secret://vault/secret/app#nope")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://vault/secret/app#nope",
        &["field 'nope' not found"],
        &[KV2_PASSWORD],
    );
    let e = resolve(&env, "secret://vault/secret/app")
        .await
        .unwrap_err();
    assert_error(&e, "secret://vault/secret/app", &["need a #field"], &[]);
    let e = resolve(
        &[("VAULT_TOKEN", "x"), ("HOME", home_s.as_str())],
        "secret://vault/secret/app#password",
    )
    .await
    .unwrap_err();
    assert_error(
        &e,
        "secret://vault/secret/app#password",
        &["VAULT_ADDR is not set"],
        &[],
    );
    let empty_home = temp_dir("vault-empty-home");
    let empty_s = empty_home.display().to_string();
    let e = resolve(
        &[("VAULT_ADDR", addr.as_str()), ("HOME", empty_s.as_str())],
        "secret://vault/secret/app#password",
    )
    .await
    .unwrap_err();
    assert_error(
        &e,
        "secret://vault/secret/app#password",
        &["no Vault token"],
        &[],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vault_custom_ca_over_tls_on_openbao() {
    let dir = temp_dir("bao-tls");
    let (_bao, addr) = start_openbao(Some(&dir)).await;
    assert!(addr.starts_with("https://"));
    let ca = dir.join("vault-ca.pem").display().to_string();
    bao_call_tls(
        &addr,
        &dir,
        "secret/data/tls",
        json!({"data": {"k": "over-tls-value"}}),
    )
    .await;
    let home = temp_dir("bao-tls-home");
    let home_s = home.display().to_string();
    let env = [
        ("VAULT_ADDR", addr.as_str()),
        ("VAULT_TOKEN", BAO_ROOT_TOKEN),
        ("VAULT_CACERT", ca.as_str()),
        ("HOME", home_s.as_str()),
    ];
    assert_eq!(
        resolve(&env, "secret://vault/secret/tls#k").await.unwrap(),
        "over-tls-value"
    );
    // Without the CA the server's certificate is not trusted.
    let e = resolve(&env[..2], "secret://vault/secret/tls#k")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://vault/secret/tls#k",
        &["not reachable"],
        &["over-tls-value"],
    );
}

async fn bao_call_tls(addr: &str, dir: &Path, path: &str, body: serde_json::Value) {
    let pem = std::fs::read(dir.join("vault-ca.pem")).unwrap();
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .build()
        .unwrap();
    let resp = client
        .post(format!("{addr}/v1/{path}"))
        .header("x-vault-token", BAO_ROOT_TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
}

// ---------------------------------------------------------------- GCP (fake)

/// A FAKE of Google's endpoints, on loopback: Secret Manager `versions/<v>:access`,
/// an OAuth token endpoint (it verifies the RS256 JWT against the test key pair's
/// public key, and the refresh-token grant against fixed client credentials) and the
/// metadata server's token and project endpoints. It is a fake because no Secret
/// Manager emulator exists in the registries reachable here; everything else in this
/// file runs against real peers.
mod gcp_fake {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    pub const SA_EMAIL: &str = "reader@test-project.iam.gserviceaccount.com";
    pub const USER_CLIENT_ID: &str = "user-client-id";
    pub const USER_CLIENT_SECRET: &str = "user-client-secret";
    pub const USER_REFRESH: &str = "user-refresh-token";

    #[derive(Default)]
    pub struct Seen {
        pub token_grants: Vec<String>,
        pub metadata_tokens: usize,
        pub access: Vec<(String, String, Option<String>)>,
    }

    pub struct Fake {
        pub port: u16,
        pub seen: Arc<Mutex<Seen>>,
        task: tokio::task::JoinHandle<()>,
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            self.task.abort();
        }
    }

    impl Fake {
        pub fn url(&self) -> String {
            format!("http://127.0.0.1:{}", self.port)
        }
    }

    struct Req {
        method: String,
        path: String,
        headers: Vec<(String, String)>,
        body: String,
    }

    impl Req {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }
    }

    async fn read_req(s: &mut tokio::net::TcpStream) -> Option<Req> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            let n = s.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            if buf.len() > 1 << 20 {
                return None;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let method = first.next()?.to_owned();
        let path = first.next()?.to_owned();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
            .collect();
        let len: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = buf[head_end + 4..].to_vec();
        while body.len() < len {
            let n = s.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        Some(Req {
            method,
            path,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }

    fn form_get(body: &str, key: &str) -> Option<String> {
        body.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == key).then(|| {
                let mut out = Vec::new();
                let b = v.as_bytes();
                let mut i = 0;
                while i < b.len() {
                    if b[i] == b'%' && i + 2 < b.len() + 1 {
                        let h = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
                        out.push(u8::from_str_radix(h, 16).unwrap());
                        i += 3;
                    } else {
                        out.push(if b[i] == b'+' { b' ' } else { b[i] });
                        i += 1;
                    }
                }
                String::from_utf8(out).unwrap()
            })
        })
    }

    /// Checks a service-account JWT: RS256 signature with `public_key`, claims.
    fn jwt_ok(jwt: &str, public_key: &[u8], token_uri: &str) -> bool {
        use aws_lc_rs::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
        let parts: Vec<&str> = jwt.split('.').collect();
        if parts.len() != 3 {
            return false;
        }
        let Ok(sig) = URL_SAFE_NO_PAD.decode(parts[2]) else {
            return false;
        };
        let signed = format!("{}.{}", parts[0], parts[1]);
        if UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, public_key)
            .verify(signed.as_bytes(), &sig)
            .is_err()
        {
            return false;
        }
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        header["alg"] == "RS256"
            && header["kid"] == "test-key-id"
            && claims["iss"] == SA_EMAIL
            && claims["aud"] == token_uri
            && claims["scope"] == "https://www.googleapis.com/auth/cloud-platform"
            && claims["exp"].as_u64() > claims["iat"].as_u64()
    }

    fn secret(name: &str, version: &str) -> Option<(Vec<u8>, Option<u32>)> {
        let data: Vec<u8> = match (name, version) {
            ("db", "latest") | ("db", "2") => b"gcp-secret-value-latest \xe2\x9c\x93".to_vec(),
            ("db", "1") => b"gcp-secret-value-v1".to_vec(),
            ("corrupt", _) => {
                return Some((b"gcp-corrupted-payload".to_vec(), Some(12345)));
            }
            ("binary", _) => vec![0xff, 0x00, 0xfe],
            _ => return None,
        };
        let crc = openclaw_mcp_native::secrets::gcp::crc32c(&data);
        Some((data, Some(crc)))
    }

    fn respond(status: u16, body: &str) -> String {
        format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    fn handle(req: &Req, public_key: &[u8], base: &str, seen: &Mutex<Seen>) -> String {
        let token_uri = format!("{base}/token");
        if req.method == "POST" && req.path == "/token" {
            let grant = form_get(&req.body, "grant_type").unwrap_or_default();
            seen.lock().unwrap().token_grants.push(grant.clone());
            return match grant.as_str() {
                "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
                    let jwt = form_get(&req.body, "assertion").unwrap_or_default();
                    if jwt_ok(&jwt, public_key, &token_uri) {
                        respond(
                            200,
                            r#"{"access_token":"tok-sa","expires_in":3600,"token_type":"Bearer"}"#,
                        )
                    } else {
                        respond(
                            400,
                            r#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#,
                        )
                    }
                }
                "refresh_token" => {
                    let ok = form_get(&req.body, "client_id").as_deref() == Some(USER_CLIENT_ID)
                        && form_get(&req.body, "client_secret").as_deref()
                            == Some(USER_CLIENT_SECRET)
                        && form_get(&req.body, "refresh_token").as_deref() == Some(USER_REFRESH);
                    if ok {
                        respond(
                            200,
                            r#"{"access_token":"tok-user","expires_in":3600,"token_type":"Bearer"}"#,
                        )
                    } else {
                        respond(400, r#"{"error":"invalid_client"}"#)
                    }
                }
                _ => respond(400, r#"{"error":"unsupported_grant_type"}"#),
            };
        }
        if req.path.starts_with("/computeMetadata/v1/") {
            if req.header("metadata-flavor") != Some("Google") {
                return respond(403, "{}");
            }
            return match req.path.as_str() {
                "/computeMetadata/v1/instance/service-accounts/default/token" => {
                    seen.lock().unwrap().metadata_tokens += 1;
                    respond(
                        200,
                        r#"{"access_token":"tok-meta","expires_in":3599,"token_type":"Bearer"}"#,
                    )
                }
                "/computeMetadata/v1/project/project-id" => "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 12\r\nconnection: close\r\n\r\nmeta-project".to_owned(),
                _ => respond(404, "{}"),
            };
        }
        // /v1/projects/<p>/secrets/<s>/versions/<v>:access
        let auth = req.header("authorization").unwrap_or_default().to_owned();
        seen.lock().unwrap().access.push((
            req.path.clone(),
            auth.clone(),
            req.header("x-goog-user-project").map(str::to_owned),
        ));
        if !["Bearer tok-sa", "Bearer tok-user", "Bearer tok-meta"].contains(&auth.as_str()) {
            return respond(
                401,
                r#"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#,
            );
        }
        let parts: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
        if let ["v1", "projects", project, "secrets", name, "versions", last] = parts.as_slice()
            && let Some(version) = last.strip_suffix(":access")
        {
            if ![
                "test-project",
                "explicit-project",
                "meta-project",
                "quota-project",
            ]
            .contains(project)
            {
                return respond(
                    403,
                    r#"{"error":{"code":403,"message":"Permission denied on project","status":"PERMISSION_DENIED"}}"#,
                );
            }
            return match secret(name, version) {
                Some((data, crc)) => {
                    let mut payload = json!({ "data": STANDARD.encode(&data) });
                    if let Some(c) = crc {
                        payload["dataCrc32c"] = json!(c.to_string());
                    }
                    respond(200, &json!({"name": format!("projects/{project}/secrets/{name}/versions/1"), "payload": payload}).to_string())
                }
                None => respond(404, &json!({"error": {"code": 404, "message": format!("Secret [projects/{project}/secrets/{name}] not found or has no versions."), "status": "NOT_FOUND"}}).to_string()),
            };
        }
        respond(404, r#"{"error":{"code":404,"status":"NOT_FOUND"}}"#)
    }

    pub async fn start(public_key: Vec<u8>) -> Fake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let seen2 = seen.clone();
        let base = format!("http://127.0.0.1:{port}");
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut s, _)) = listener.accept().await else {
                    break;
                };
                let pk = public_key.clone();
                let seen = seen2.clone();
                let base = base.clone();
                tokio::spawn(async move {
                    if let Some(req) = read_req(&mut s).await {
                        let resp = handle(&req, &pk, &base, &seen);
                        let _ = s.write_all(resp.as_bytes()).await;
                        let _ = s.shutdown().await;
                    }
                });
            }
        });
        Fake { port, seen, task }
    }
}

/// A fresh RSA-2048 key pair: (PKCS#8 PEM, public key as PKCS#1 DER).
fn test_key_pair() -> (String, Vec<u8>) {
    use aws_lc_rs::encoding::AsDer;
    use aws_lc_rs::signature::KeyPair as _;
    let kp = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
    let der = kp.as_der().unwrap();
    let b64 = STANDARD.encode(der.as_ref());
    let mut pem = String::from("-----BEGIN PRIVATE KEY-----\n");
    for line in b64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).unwrap());
        pem.push('\n');
    }
    pem.push_str("-----END PRIVATE KEY-----\n");
    (pem, kp.public_key().as_ref().to_vec())
}

fn service_account_file(dir: &Path, pem: &str, token_uri: &str) -> String {
    let path = dir.join("sa.json");
    std::fs::write(
        &path,
        json!({
            "type": "service_account",
            "project_id": "test-project",
            "private_key_id": "test-key-id",
            "private_key": pem,
            "client_email": gcp_fake::SA_EMAIL,
            "client_id": "1234",
            "token_uri": token_uri,
        })
        .to_string(),
    )
    .unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcp_service_account_file_against_the_fake() {
    let (pem, public) = test_key_pair();
    let fake = gcp_fake::start(public).await;
    let base = fake.url();
    let dir = temp_dir("gcp-sa");
    let home = dir.display().to_string();
    let sa = service_account_file(&dir, &pem, &format!("{base}/token"));
    let env = [
        ("GOOGLE_APPLICATION_CREDENTIALS", sa.as_str()),
        ("GCP_SECRET_MANAGER_ENDPOINT", base.as_str()),
        ("HOME", home.as_str()),
    ];
    let r = resolver(&env);
    let latest = "gcp-secret-value-latest ✓";
    assert_eq!(
        r.resolve("secret://gcp/db").await.unwrap().expose_secret(),
        latest
    );
    assert_eq!(
        r.resolve("secret://gcp/db#1")
            .await
            .unwrap()
            .expose_secret(),
        "gcp-secret-value-v1"
    );
    assert_eq!(
        r.resolve("secret://gcp/projects/explicit-project/secrets/db#2")
            .await
            .unwrap()
            .expose_secret(),
        latest
    );
    {
        let seen = fake.seen.lock().unwrap();
        assert_eq!(
            seen.token_grants,
            ["urn:ietf:params:oauth:grant-type:jwt-bearer"],
            "one token, cached"
        );
        let paths: Vec<&str> = seen.access.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/v1/projects/test-project/secrets/db/versions/latest:access",
                "/v1/projects/test-project/secrets/db/versions/1:access",
                "/v1/projects/explicit-project/secrets/db/versions/2:access",
            ]
        );
        assert!(
            seen.access
                .iter()
                .all(|(_, auth, _)| auth == "Bearer tok-sa")
        );
    }
    // GOOGLE_CLOUD_PROJECT beats the file's project_id.
    let mut with_project = env.to_vec();
    with_project.push(("GOOGLE_CLOUD_PROJECT", "quota-project"));
    assert_eq!(
        resolve(&with_project, "secret://gcp/db").await.unwrap(),
        latest
    );

    // Failures: corrupted payload, not found, not UTF-8, denied project, bad reference.
    let e = r.resolve("secret://gcp/corrupt").await.unwrap_err();
    assert_error(
        &e,
        "secret://gcp/corrupt",
        &["checksum mismatch", "dataCrc32c 12345"],
        &["gcp-corrupted-payload"],
    );
    let e = r.resolve("secret://gcp/missing").await.unwrap_err();
    assert_error(
        &e,
        "secret://gcp/missing",
        &["answered 404 (NOT_FOUND)"],
        &["has no versions"],
    );
    let e = r.resolve("secret://gcp/binary").await.unwrap_err();
    assert_error(&e, "secret://gcp/binary", &["not UTF-8"], &[]);
    let e = r
        .resolve("secret://gcp/projects/other/secrets/db")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://gcp/projects/other/secrets/db",
        &["answered 403 (PERMISSION_DENIED)"],
        &["Permission denied on"],
    );
    let e = r.resolve("secret://gcp/a/b").await.unwrap_err();
    assert_error(
        &e,
        "secret://gcp/a/b",
        &["expected secret://gcp/<secret>"],
        &[],
    );

    // A key the token endpoint does not know: its RS256 check fails.
    let (other_pem, _) = test_key_pair();
    let other_dir = temp_dir("gcp-sa-other");
    let other = service_account_file(&other_dir, &other_pem, &format!("{base}/token"));
    let e = resolve(
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", other.as_str()),
            ("GCP_SECRET_MANAGER_ENDPOINT", base.as_str()),
            ("HOME", home.as_str()),
        ],
        "secret://gcp/db",
    )
    .await
    .unwrap_err();
    assert_error(
        &e,
        "secret://gcp/db",
        &["answered 400 (invalid_grant)"],
        &["Invalid JWT Signature"],
    );
    // A credentials file that does not exist is an error, not a fall-through.
    let e = resolve(
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/sa.json"),
            ("HOME", home.as_str()),
        ],
        "secret://gcp/db",
    )
    .await
    .unwrap_err();
    assert_error(
        &e,
        "secret://gcp/db",
        &["/nonexistent/sa.json not found"],
        &[],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcp_metadata_server_and_authorized_user_against_the_fake() {
    let (_pem, public) = test_key_pair();
    let fake = gcp_fake::start(public).await;
    let base = fake.url();
    let host = format!("127.0.0.1:{}", fake.port);

    // Metadata server: no credential file anywhere (empty HOME); the project comes
    // from the metadata server too.
    let empty = temp_dir("gcp-meta-home");
    let empty_s = empty.display().to_string();
    let env = [
        ("GCE_METADATA_HOST", host.as_str()),
        ("GCP_SECRET_MANAGER_ENDPOINT", base.as_str()),
        ("HOME", empty_s.as_str()),
    ];
    let r = resolver(&env);
    assert_eq!(
        r.resolve("secret://gcp/db#1")
            .await
            .unwrap()
            .expose_secret(),
        "gcp-secret-value-v1"
    );
    assert_eq!(
        r.resolve("secret://gcp/db#1")
            .await
            .unwrap()
            .expose_secret(),
        "gcp-secret-value-v1"
    );
    {
        let seen = fake.seen.lock().unwrap();
        assert_eq!(seen.metadata_tokens, 1, "the metadata token is cached");
        assert!(seen.token_grants.is_empty());
        assert_eq!(
            seen.access[0].0,
            "/v1/projects/meta-project/secrets/db/versions/1:access"
        );
        assert_eq!(seen.access[0].1, "Bearer tok-meta");
    }

    // Authorized-user file at gcloud's well-known path (HOME/.config/gcloud/…).
    let home = temp_dir("gcp-user-home");
    let gcloud = home.join(".config/gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    std::fs::write(
        gcloud.join("application_default_credentials.json"),
        json!({
            "type": "authorized_user",
            "client_id": gcp_fake::USER_CLIENT_ID,
            "client_secret": gcp_fake::USER_CLIENT_SECRET,
            "refresh_token": gcp_fake::USER_REFRESH,
            "quota_project_id": "quota-project",
            "token_uri": format!("{base}/token"),
        })
        .to_string(),
    )
    .unwrap();
    let home_s = home.display().to_string();
    let user_env = [
        ("GCP_SECRET_MANAGER_ENDPOINT", base.as_str()),
        ("GCE_METADATA_HOST", host.as_str()),
        ("HOME", home_s.as_str()),
    ];
    assert_eq!(
        resolve(&user_env, "secret://gcp/db#1").await.unwrap(),
        "gcp-secret-value-v1"
    );
    {
        let seen = fake.seen.lock().unwrap();
        assert_eq!(seen.token_grants, ["refresh_token"]);
        let last = seen.access.last().unwrap();
        assert_eq!(
            last.0,
            "/v1/projects/quota-project/secrets/db/versions/1:access"
        );
        assert_eq!(last.1, "Bearer tok-user");
        assert_eq!(
            last.2.as_deref(),
            Some("quota-project"),
            "x-goog-user-project"
        );
        assert_eq!(
            seen.metadata_tokens, 1,
            "the file wins over the metadata server"
        );
    }

    // No metadata server either: a clear failure.
    let dead = format!("127.0.0.1:{}", free_port());
    let e = resolve(
        &[
            ("GCE_METADATA_HOST", dead.as_str()),
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("HOME", empty_s.as_str()),
        ],
        "secret://gcp/db",
    )
    .await
    .unwrap_err();
    assert_error(
        &e,
        "secret://gcp/db",
        &["no access token from metadata server", &dead],
        &[],
    );
}

// ---------------------------------------------------------------- exec SecretRefs

/// A real helper speaking OpenClaw's exec protocol: it checks the request and answers
/// `exec-value-<id>`; the id `missing` is reported in `errors`; `slow` sleeps; `junk`
/// prints non-JSON (including a would-be secret); `big` prints 4 KiB; `fail` exits 4.
const HELPER: &str = r#"
import json, sys, time
req = json.load(sys.stdin)
if req.get("protocolVersion") != 1 or req.get("provider") != sys.argv[1] or len(req.get("ids", [])) != 1:
    sys.exit(3)
i = req["ids"][0]
if i == "slow":
    time.sleep(30)
if i.startswith("nap"):
    time.sleep(1.5)
if i == "junk":
    print("leaked-stdout-value not json")
    sys.exit(0)
if i == "big":
    print("x" * 4096)
    sys.exit(0)
if i == "fail":
    sys.exit(4)
if i == "missing":
    print(json.dumps({"protocolVersion": 1, "values": {}, "errors": {i: {"message": "no such secret in the store"}}}))
    sys.exit(0)
print(json.dumps({"protocolVersion": 1, "values": {i: "exec-value-" + i + " " + sys.argv[2]}}))
"#;

fn exec_definitions(file_path: &str) -> ProviderDefinitions {
    ProviderDefinitions::from_openclaw_json(&json!({
        "secrets": {
            "providers": {
                "vaultcli": { "source": "exec", "command": "python3", "args": ["-c", HELPER, "vaultcli", "ok"], "timeoutMs": 2000, "maxOutputBytes": 1024 },
                "other": { "source": "exec", "command": "python3", "args": ["-c", HELPER, "other", "from-other"], "passEnv": ["PATH", "HOME", "PYENV_ROOT", "PYENV_VERSION"] },
                "filemain": { "source": "file", "path": file_path, "mode": "json" },
                "single": { "source": "file", "path": file_path, "mode": "singleValue" },
                "envdefault": { "source": "env" },
            }
        }
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_secret_refs_run_a_real_helper() {
    let dir = temp_dir("exec");
    let file = dir.join("secrets.json");
    std::fs::write(
        &file,
        r#"{"providers":{"openai":{"apiKey":"sk-file-provider-value"}},"n":1}"#,
    )
    .unwrap();
    let file_s = file.display().to_string();
    let home = dir.display().to_string();
    let r = resolver(&[
        ("HOME", home.as_str()),
        ("OPENAI_API_KEY", "sk-env-ref-value"),
    ])
    .with_provider_definitions(exec_definitions(&file_s));

    assert_eq!(
        r.resolve("secret://exec/vaultcli#db/password")
            .await
            .unwrap()
            .expose_secret(),
        "exec-value-db/password ok"
    );
    assert_eq!(
        r.resolve("secret://exec/other#a.b:c")
            .await
            .unwrap()
            .expose_secret(),
        "exec-value-a.b:c from-other"
    );
    assert_eq!(
        r.resolve("secret://file/@filemain#/providers/openai/apiKey")
            .await
            .unwrap()
            .expose_secret(),
        "sk-file-provider-value"
    );

    // The helper's own error for an id.
    let e = r
        .resolve("secret://exec/vaultcli#missing")
        .await
        .unwrap_err();
    assert_error(
        &e,
        "secret://exec/vaultcli#missing",
        &["no such secret in the store"],
        &[],
    );
    // Timeout (timeoutMs 2000): the helper is killed, quickly.
    let started = Instant::now();
    let e = r.resolve("secret://exec/vaultcli#slow").await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_error(
        &e,
        "secret://exec/vaultcli#slow",
        &["timed out after 2000 ms"],
        &[],
    );
    // Not JSON: the output is not echoed.
    let e = r.resolve("secret://exec/vaultcli#junk").await.unwrap_err();
    assert_error(
        &e,
        "secret://exec/vaultcli#junk",
        &["did not answer with JSON"],
        &["leaked-stdout-value"],
    );
    // Output bound (maxOutputBytes 1024).
    let e = r.resolve("secret://exec/vaultcli#big").await.unwrap_err();
    assert_error(
        &e,
        "secret://exec/vaultcli#big",
        &["more than 1024 bytes"],
        &["xxxx"],
    );
    // A failing exit status.
    let e = r.resolve("secret://exec/vaultcli#fail").await.unwrap_err();
    assert_error(
        &e,
        "secret://exec/vaultcli#fail",
        &["exited with status 4"],
        &[],
    );
    // Unknown provider, missing id, a command that does not exist.
    let e = r.resolve("secret://exec/nope#x").await.unwrap_err();
    assert_error(
        &e,
        "secret://exec/nope#x",
        &["no exec provider 'nope'"],
        &[],
    );
    let e = r.resolve("secret://exec/vaultcli").await.unwrap_err();
    assert_error(&e, "secret://exec/vaultcli", &["need an id"], &[]);
    let mut defs = BTreeMap::new();
    defs.insert(
        "gone".to_owned(),
        openclaw_mcp_native::secrets::ExecDefinition::new("/nonexistent/helper"),
    );
    let r2 = resolver(&[]).with_provider_definitions(ProviderDefinitions {
        exec: defs,
        file: BTreeMap::new(),
    });
    let e = r2.resolve("secret://exec/gone#x").await.unwrap_err();
    assert_error(
        &e,
        "secret://exec/gone#x",
        &["cannot run '/nonexistent/helper'"],
        &[],
    );

    // The resolver's own deadline bounds a helper too.
    let short = resolver(&[("HOME", home.as_str())])
        .with_provider_definitions(exec_definitions(&file_s))
        .with_timeout(Duration::from_millis(300));
    let e = short
        .resolve("secret://exec/vaultcli#slow")
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Timed out resolving secret://exec/vaultcli#slow after 300 ms"
    );
    // Distinct references run in parallel (two 1.5 s helpers take well under 3 s).
    let started = Instant::now();
    let both = r
        .resolve_all(&[
            ("A".into(), "secret://exec/vaultcli#nap-a".into()),
            ("B".into(), "secret://exec/vaultcli#nap-b".into()),
        ])
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(both[1].1.expose_secret(), "exec-value-nap-b ok");

    // File provider modes and errors.
    let e = r.resolve("secret://file/@filemain#/n").await.unwrap_err();
    assert_error(&e, "secret://file/@filemain#/n", &["not a string"], &[]);
    let e = r
        .resolve("secret://file/@filemain#/providers/x")
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("Field '/providers/x' not found"),
        "{e}"
    );
    let e = r.resolve("secret://file/@single#/x").await.unwrap_err();
    assert_error(
        &e,
        "secret://file/@single#/x",
        &["the id must be 'value'"],
        &[],
    );
    assert!(
        r.resolve("secret://file/@single#value")
            .await
            .unwrap()
            .expose_secret()
            .contains("sk-file-provider-value")
    );
    let e = r.resolve("secret://file/@undefined#/x").await.unwrap_err();
    assert_error(
        &e,
        "secret://file/@undefined#/x",
        &["no file provider 'undefined'"],
        &[],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_ref_objects_in_config_resolve_through_their_canonical_form() {
    let dir = temp_dir("secretref");
    let file = dir.join("secrets.json");
    std::fs::write(
        &file,
        r#"{"providers":{"openai":{"apiKey":"sk-file-provider-value"}}}"#,
    )
    .unwrap();
    let file_s = file.display().to_string();
    let validated = validate_mcp_config(&json!({
        "servers": {
            "s": {
                "command": "x",
                "env": {
                    "FROM_ENV": { "source": "env", "provider": "default", "id": "OPENAI_API_KEY" },
                    "FROM_FILE": { "source": "file", "provider": "filemain", "id": "/providers/openai/apiKey" },
                    "FROM_EXEC": { "source": "exec", "provider": "vaultcli", "id": "db/password" },
                    "PLAIN": "plain",
                },
                "headers": { "Authorization": { "source": "env", "id": "OPENAI_API_KEY" } }
            }
        }
    }))
    .unwrap();
    let server = &validated.config.servers[0];
    let env: Vec<(&str, &str)> = server
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        env,
        [
            ("FROM_ENV", "secret://env/OPENAI_API_KEY"),
            (
                "FROM_FILE",
                "secret://file/@filemain#/providers/openai/apiKey"
            ),
            ("FROM_EXEC", "secret://exec/vaultcli#db/password"),
            ("PLAIN", "plain"),
        ]
    );
    assert_eq!(server.headers[0].1, "secret://env/OPENAI_API_KEY");
    // The JSON data keeps the objects as written.
    assert_eq!(
        validated.data["servers"]["s"]["env"]["FROM_EXEC"]["source"],
        "exec"
    );

    let home = dir.display().to_string();
    let r = resolver(&[
        ("HOME", home.as_str()),
        ("OPENAI_API_KEY", "sk-env-ref-value"),
    ])
    .with_provider_definitions(exec_definitions(&file_s));
    let resolved = r.resolve_all(&server.env).await.unwrap();
    let got: Vec<(&str, &str)> = resolved
        .iter()
        .map(|(k, v)| (k.as_str(), v.expose_secret()))
        .collect();
    assert_eq!(
        got,
        [
            ("FROM_ENV", "sk-env-ref-value"),
            ("FROM_FILE", "sk-file-provider-value"),
            ("FROM_EXEC", "exec-value-db/password ok"),
            ("PLAIN", "plain"),
        ]
    );

    // Invalid SecretRefs are path-qualified validation errors.
    let bad = |v: serde_json::Value| {
        validate_mcp_config(&json!({"servers": {"s": {"command": "x", "env": {"K": v}}}}))
            .unwrap_err()
    };
    assert_eq!(
        bad(json!({"source": "env", "id": "lower"})),
        "servers.s.env.K: Invalid SecretRef: an env id must match ^[A-Z][A-Z0-9_]{0,127}$"
    );
    assert_eq!(
        bad(json!({"source": "exec", "id": "x"})),
        "servers.s.env.K: Invalid SecretRef: source 'exec' needs a 'provider' (a secrets.providers entry)"
    );
    assert_eq!(
        bad(json!({"source": "file", "provider": "f", "id": "rel/path"})),
        "servers.s.env.K: Invalid SecretRef: a file id must be a JSON pointer ('/…', no '#') or 'value'"
    );
    assert_eq!(
        bad(json!({"source": "store", "provider": "p", "id": "x"})),
        "servers.s.env.K: Invalid SecretRef: source 'store' is not supported here"
    );
    assert_eq!(
        bad(json!({"source": "env", "id": "A", "extra": 1})),
        "servers.s.env.K: Invalid SecretRef: unrecognized key 'extra' (expected source, provider, id)"
    );
    assert_eq!(
        bad(json!({"source": "exec", "provider": "Bad", "id": "x"})),
        "servers.s.env.K: Invalid SecretRef: 'provider' must match ^[a-z][a-z0-9_-]{0,63}$"
    );
    // An object without `source` is still just not a string.
    assert_eq!(
        bad(json!({"id": "A"})),
        "servers.s.env.K: Expected string, received object"
    );

    // Provider definitions are checked too.
    let e = ProviderDefinitions::from_openclaw_json(
        &json!({"secrets": {"providers": {"x": {"source": "exec"}}}}),
    )
    .unwrap_err();
    assert_eq!(
        e,
        "secrets.providers.x.command: Expected a non-empty string"
    );
    let e = ProviderDefinitions::from_openclaw_json(&json!({"secrets": {"providers": {"x": {"source": "exec", "command": "c", "timeoutMs": -1}}}})).unwrap_err();
    assert!(e.starts_with("secrets.providers.x.timeoutMs: "), "{e}");
}

// ---------------------------------------------------------------- ${VAR}

#[tokio::test]
async fn env_var_substitution_in_plain_values() {
    let env = [
        ("API_TOKEN", "tok-substituted-123"),
        ("BASE", "https://api.example.com"),
        ("EMPTY", ""),
        ("NESTED", "${API_TOKEN}"),
        ("HOME_DIR", "/home/someone"),
    ];
    let cases = [
        ("${API_TOKEN}", "tok-substituted-123"),
        ("Bearer ${API_TOKEN}", "Bearer tok-substituted-123"),
        (
            "${BASE}/v1?k=${API_TOKEN}",
            "https://api.example.com/v1?k=tok-substituted-123",
        ),
        ("$${API_TOKEN}", "${API_TOKEN}"),
        (
            "a $${API_TOKEN} and ${API_TOKEN}",
            "a ${API_TOKEN} and tok-substituted-123",
        ),
        ("${lower}", "${lower}"),
        ("$API_TOKEN", "$API_TOKEN"),
        ("${}", "${}"),
        ("${API_TOKEN", "${API_TOKEN"),
        ("$$", "$$"),
        ("cost: $5", "cost: $5"),
        ("${NESTED}", "${API_TOKEN}"),
        ("no refs", "no refs"),
    ];
    for (input, expected) in cases {
        assert_eq!(resolve(&env, input).await.unwrap(), expected, "{input}");
    }
    let e = resolve(&env, "Bearer ${MISSING_VAR}").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Environment variable 'MISSING_VAR' not set (from ${MISSING_VAR})"
    );
    assert_eq!(e.uri(), "${MISSING_VAR}");
    let e = resolve(&env, "${EMPTY}").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Environment variable 'EMPTY' is empty (from ${EMPTY})"
    );
    // secret:// values are not substituted.
    let e = resolve(&env, "secret://env/${API_TOKEN}")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("'${API_TOKEN}' not set"), "{e}");

    // In resolve_all a missing variable fails the whole call before any fetch.
    let e = resolver(&env)
        .resolve_all(&[
            ("A".into(), "${API_TOKEN}".into()),
            ("B".into(), "${NOPE}".into()),
        ])
        .await
        .unwrap_err();
    assert_eq!(e.uri(), "${NOPE}");

    // With a redactor: the substituted secret is masked; a non-credential value is not.
    let redactor = Redactor::new();
    let r = resolver(&env).with_redactor(redactor.clone());
    let out = r
        .resolve_all(&[
            ("Authorization".into(), "Bearer ${API_TOKEN}".into()),
            ("WORKDIR".into(), "${HOME_DIR}/x".into()),
        ])
        .await
        .unwrap();
    assert_eq!(out[0].1.expose_secret(), "Bearer tok-substituted-123");
    assert_eq!(
        redactor.redact("echo tok-substituted-123 from /home/someone/x"),
        "echo [REDACTED] from /home/someone/x"
    );
}
