//! HTTPS through the forges' client against a real TLS server (`openssl s_server`) whose
//! certificate a private CA signed, as a GitHub Enterprise or GitLab behind a company CA is:
//! refused while the CA is unknown, accepted once the platform's trust store holds it
//! (`SSL_CERT_FILE`, which the platform verifier reads on Linux). Skipped without `openssl`.
//! One test in this binary: it sets `SSL_CERT_FILE` for the process.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pitwall_forge::http::{HttpClient, Method};

fn openssl(dir: &Path, args: &[&str]) -> bool {
    Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A CA, and a `localhost` server certificate it signed, in `dir`.
fn make_certificates(dir: &Path) -> bool {
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=pitwall test CA",
        ],
    ) && openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=localhost",
        ],
    ) && openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "1",
            "-extfile",
            "ext.cnf",
        ],
    )
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `openssl s_server` answering every request with its status page, once it accepts.
fn serve(dir: &Path) -> (Server, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("openssl")
        .args([
            "s_server", "-quiet", "-www", "-cert", "leaf.pem", "-key", "leaf.key",
        ])
        .args(["-accept", &port.to_string()])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "s_server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, port)
}

#[test]
fn a_private_ca_is_refused_until_the_trust_store_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    if !make_certificates(dir.path()) {
        eprintln!("skipped: no openssl command to make certificates with");
        return;
    }
    let (_server, port) = serve(dir.path());
    let url = format!("https://localhost:{port}/SECRET-PATH");
    let client = || {
        HttpClient::new(
            vec![("authorization", "Bearer SECRET-TOKEN".to_string())],
            Duration::from_secs(10),
        )
        .unwrap()
    };

    // SAFETY (both): the only test of this binary, so no other thread reads the environment.
    unsafe { std::env::remove_var("SSL_CERT_FILE") };
    let err = client().send(Method::Get, &url, None).unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(shown.contains("UnknownIssuer"), "{shown}");
    assert!(!shown.contains("SECRET"), "{shown}");

    unsafe { std::env::set_var("SSL_CERT_FILE", dir.path().join("ca.pem")) };
    let answer = client().send(Method::Get, &url, None).unwrap();
    assert_eq!(answer.status, 200);
    assert!(answer.body.contains("s_server"), "{}", answer.body);
}
