//! A local HTTP server standing in for an alert webhook (or any endpoint a test posts to):
//! it answers every request alike and hands each request's method, path and body to the test.

/// A local HTTP server answering 200 to every request; the bodies it got, in order.
pub fn webhook_server() -> (String, std::sync::mpsc::Receiver<String>) {
    let (base, rx) = http_server("200 OK", "ok");
    (format!("{base}/hooks/T000/SECRET"), rx)
}

/// A local HTTP server answering `status` and `reply` to every request; each request's method
/// and path, a newline, and its body (`POST /path\n{body}`), in order.
pub fn http_server(
    status: &'static str,
    reply: &'static str,
) -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0;
            let mut request_line = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if request_line.is_empty() {
                    request_line = line.split(' ').take(2).collect::<Vec<_>>().join(" ");
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let body = String::from_utf8(body).unwrap();
            if tx.send(format!("{request_line}\n{body}")).is_err() {
                return;
            }
        }
    });
    (url, rx)
}
