//! A real `pitwall serve` for end-to-end tests, on a free loopback port, and a small blocking
//! HTTP/1.1 client to talk to it (one request per connection, `Connection: close`): the tests
//! speak to the server the way any client would, with no HTTP crate in between.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::Sandbox;

/// A running `pitwall serve`; killed when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
    /// Every line the server wrote to standard error so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

/// One answer: status and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// The status line and headers, as sent.
    pub headers: String,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The value of header `name` (case-insensitive), the first if several.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }

    /// The whole `Set-Cookie` line that sets cookie `name`.
    pub fn set_cookie(&self, name: &str) -> Option<String> {
        self.headers.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            let v = v.trim();
            (k.trim().eq_ignore_ascii_case("set-cookie") && v.starts_with(&format!("{name}=")))
                .then(|| v.to_string())
        })
    }

    /// `name=value` of the cookie the answer sets, for a later request's `Cookie` header.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.set_cookie(name)
            .map(|l| l.split(';').next().unwrap_or_default().to_string())
    }

    /// The `value` of the first `<input name="NAME" value="…">` of an HTML body.
    pub fn input_value(&self, name: &str) -> Option<String> {
        let at = self.body.find(&format!("name=\"{name}\" value=\""))?;
        let rest = &self.body[at + name.len() + 15..];
        rest.split('"').next().map(str::to_string)
    }
}

/// `application/x-www-form-urlencoded` of one key or value (also right in a query string).
pub fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                (b as char).to_string()
            }
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Server {
    /// `pitwall serve --listen 127.0.0.1:0 ARGS` in `sb`, once it listens.
    pub fn start(sb: &Sandbox, args: &[&str]) -> Server {
        Server::start_with_env(sb, args, &[])
    }

    /// `start`, with `env` set for the server (test hooks such as
    /// `PITWALL_FAULT_PAUSE_IN_TXN_MS`).
    pub fn start_with_env(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut all = vec!["serve", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut cmd = sb.cmd(&all);
        cmd.envs(env.iter().copied());
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn pitwall serve");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = line
                    .strip_prefix("listening on http://")
                    .and_then(|r| r.split_whitespace().next())
                {
                    let _ = tx.send(addr.to_string());
                }
                sink.lock().unwrap().push(line);
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("pitwall serve did not listen: {:?}", log.lock().unwrap()));
        Server {
            child,
            base: format!("http://{addr}"),
            log,
        }
    }

    /// `METHOD PATH` with an optional bearer token and body.
    pub fn request(&self, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> Reply {
        let mut headers = Vec::new();
        if !body.is_empty() {
            headers.push(("Content-Type".to_string(), "application/json".to_string()));
        }
        if let Some(t) = token {
            headers.push(("Authorization".to_string(), format!("Bearer {t}")));
        }
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.send(method, path, &headers, body)
    }

    /// A browser's form post: `fields` urlencoded, with a `Cookie` header when `cookies` is
    /// not empty.
    pub fn form(&self, path: &str, cookies: &str, fields: &[(&str, &str)]) -> Reply {
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{}={}", urlencode(k), urlencode(v)))
            .collect();
        let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
        if !cookies.is_empty() {
            headers.push(("Cookie", cookies));
        }
        self.send("POST", path, &headers, body.join("&").as_bytes())
    }

    /// A browser's `GET`, with a `Cookie` header when `cookies` is not empty.
    pub fn browse(&self, path: &str, cookies: &str) -> Reply {
        let headers: Vec<(&str, &str)> = if cookies.is_empty() {
            Vec::new()
        } else {
            vec![("Cookie", cookies)]
        };
        self.send("GET", path, &headers, b"")
    }

    /// `METHOD PATH` with `headers` and `body`.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let addr = self.base.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).unwrap();
        // A server that answers before reading a large body closes the connection: the
        // answer is still there to read.
        let _ = s.write_all(body);
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no HTTP answer to {method} {path}: {text:?}"));
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(body)
        } else {
            body.to_string()
        };
        Reply {
            status,
            headers: head.to_string(),
            body,
        }
    }

    pub fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.request("GET", path, token, b"")
    }

    pub fn post(&self, path: &str, token: Option<&str>, body: &str) -> Reply {
        self.request("POST", path, token, body.as_bytes())
    }

    /// The log lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Sends SIGTERM and waits up to `within` for the exit status.
    pub fn terminate(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        // SAFETY: kill(2) on the child's pid, which this struct owns and has not reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let until = Instant::now() + within;
        while Instant::now() < until {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}
