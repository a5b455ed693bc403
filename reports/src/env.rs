//! The environment fingerprint for people (`pitwall env`): the facts that decide whether two
//! runs are comparable, then the host checks, then what should be fixed.

use pitwall_schema::sections::{
    Clocks, CudaLibraries, GpuAvailability, HostChecks, NumaNodes, Pinning, Toolchain,
};
use pitwall_schema::{Contention, Fingerprint};
use serde_json::Value;

use crate::table::Table;

fn text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "-".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A typed value as its JSON is shown by `text` (`700.0`, `["a"]`, a string bare): `-` when
/// absent.
fn json<T: serde::Serialize>(v: Option<T>) -> String {
    text(v.and_then(|v| serde_json::to_value(v).ok()).as_ref())
}

/// A typed value as `text` shows it: `-` when absent.
fn shown<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// Renders the fingerprint and warnings as aligned text.
pub fn render_env(fp: &Fingerprint, warnings: &[String]) -> String {
    let mut t = Table::new(&["FACT", "VALUE"]);
    host_rows(&mut t, fp);
    gpu_rows(&mut t, fp);
    policy_rows(&mut t, fp);
    for (k, v) in &fp.env {
        row(&mut t, &format!("env {k}"), v.clone());
    }
    let mut out = t.render();
    if let Some(checks) = host_checks(fp) {
        out.push('\n');
        out.push_str(&checks);
    }
    if !warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in warnings {
            out.push_str(&format!("  {w}\n"));
        }
    }
    out
}

/// `contention (1 s): not contended (other runnable threads 0.0, steal 0.0%, cpu pressure
/// 1.2%)`, or `contended: REASONS (…)`: how contended the benchmark CPUs were over a short
/// sample; `unknown` for a figure the kernel does not give.
pub fn render_contention(c: &Contention, seconds: f64) -> String {
    let figure = |v: Option<f64>, suffix: &str| match v {
        Some(v) => format!("{v:.1}{suffix}"),
        None => "unknown".to_string(),
    };
    let mut figures = vec![
        format!(
            "other runnable threads {}",
            figure(c.other_runnable_threads, "")
        ),
        format!("steal {}", figure(c.steal_pct, "%")),
        format!("cpu pressure {}", figure(c.psi_some_pct, "%")),
    ];
    if let Some(own) = c.psi_cgroup_some_pct {
        figures.push(format!("of it pitwall's own cgroup {own:.1}%"));
    }
    format!(
        "contention ({seconds} s): {} ({})\n",
        c.verdict(),
        figures.join(", ")
    )
}

fn row(t: &mut Table, k: &str, v: String) {
    t.row(vec![k.to_string(), v]);
}

/// The host, its toolchains, NUMA layout and CUDA libraries.
fn host_rows(t: &mut Table, fp: &Fingerprint) {
    row(t, "host", fp.hostname.clone());
    row(t, "os", format!("{} {} ({})", fp.os, fp.kernel, fp.arch));
    row(
        t,
        "cpu",
        format!("{} ({} logical cpus)", fp.cpu_model, fp.logical_cpus),
    );
    row(
        t,
        "memory",
        format!("{:.1} GiB", fp.memory_bytes as f64 / (1u64 << 30) as f64),
    );
    row(
        t,
        "governor",
        fp.cpu_governor.clone().unwrap_or_else(|| "-".into()),
    );
    row(t, "pitwall", fp.pitwall_version.clone());
    if let Some(tc) = fp.section::<Toolchain>() {
        row(t, "rustc", shown(tc.rustc));
        row(t, "cc", shown(tc.cc));
        row(t, "nvcc", shown(tc.nvcc));
    }
    if let Some(NumaNodes(nodes)) = fp.section() {
        let layout: Vec<String> = nodes.iter().map(|(n, c)| format!("{n}: {c}")).collect();
        row(t, "numa", layout.join(", "));
    }
    if let Some(CudaLibraries(libs)) = fp.section() {
        for (k, v) in libs {
            row(t, &k, v);
        }
    }
}

/// One group of rows per GPU (identity, PCI, clocks, state, topology), or why there is none.
fn gpu_rows(t: &mut Table, fp: &Fingerprint) {
    if fp.gpus.is_empty() {
        let reason = fp
            .section::<GpuAvailability>()
            .and_then(|g| g.reason)
            .unwrap_or_else(|| "none found".to_string());
        row(t, "gpu", format!("none ({reason})"));
    }
    for (i, g) in fp.gpus.iter().enumerate() {
        let d = g.details().unwrap_or_default();
        row(
            t,
            &format!("gpu {i}"),
            format!(
                "{} driver {} uuid {}",
                g.model,
                g.driver.clone().unwrap_or_default(),
                g.uuid.clone().unwrap_or_default()
            ),
        );
        row(
            t,
            &format!("gpu {i} pci"),
            format!(
                "{} gen {} x{} numa {}",
                json(d.pci_bus_id.as_ref()),
                json(d.pcie_gen.as_ref()),
                json(d.pcie_width.as_ref()),
                json(d.numa_node.as_ref())
            ),
        );
        row(
            t,
            &format!("gpu {i} clocks"),
            format!(
                "max sm {} MHz, base sm {} MHz, max mem {} MHz, power limit {} W",
                json(d.max_sm_mhz.as_ref()),
                json(d.base_sm_mhz.as_ref()),
                json(d.max_mem_mhz.as_ref()),
                json(d.power_limit_w.as_ref())
            ),
        );
        row(
            t,
            &format!("gpu {i} state"),
            format!(
                "persistence {}, ecc {}, cuda driver {}, nvlink peers {}",
                json(d.persistence_mode.as_ref()),
                json(d.ecc_enabled.as_ref()),
                json(d.cuda_driver_version.as_ref()),
                json(d.nvlink_peers.as_ref())
            ),
        );
        if let Some(topo) = &d.topology {
            let links: Vec<String> = topo
                .iter()
                .map(|(other, how)| format!("gpu {other} {how}"))
                .collect();
            row(t, &format!("gpu {i} topology"), links.join(", "));
        }
    }
}

/// The clock policy and the pinning plan.
fn policy_rows(t: &mut Table, fp: &Fingerprint) {
    if let Some(c) = fp.section::<Clocks>() {
        let mut line = format!(
            "{} (device {}, locked sm {})",
            shown(c.mode),
            shown(c.device),
            shown(c.locked_sm_mhz)
        );
        if let Some(mhz) = c.lock_target_sm_mhz {
            line.push_str(&format!("; lock would choose {mhz} MHz"));
        }
        row(t, "clock policy", line);
    }
    if let Some(p) = fp.section::<Pinning>() {
        let detail = match p.plan {
            Some(plan) => {
                let plan = plan.unwrap_or_default();
                format!(
                    "cpus {} numa {} ({})",
                    shown(plan.cpus.map(|c| Value::from(c).to_string())),
                    shown(plan.numa_node),
                    shown(plan.source)
                )
            }
            None => shown(p.error),
        };
        row(t, "pinning", format!("{}: {detail}", shown(p.policy)));
    }
}

/// The host checks' table (CHECK, VALUE, OK, ADVICE), when the fingerprint has them.
fn host_checks(fp: &Fingerprint) -> Option<String> {
    let HostChecks(checks) = fp.section()?;
    let mut c = Table::new(&["CHECK", "VALUE", "OK", "ADVICE"]);
    for check in checks {
        let ok = check.ok.unwrap_or(true);
        let value = shown(check.value);
        let ok_text = if value == "unknown" {
            "?"
        } else if ok {
            "yes"
        } else {
            "NO"
        };
        c.row(vec![
            shown(check.name),
            value,
            ok_text.to_string(),
            shown(check.advice),
        ]);
    }
    Some(c.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::{ContentionLimits, GpuInfo};
    use serde_json::json;

    #[test]
    fn contention_lines() {
        let limits = ContentionLimits {
            runnable_threads: 0.5,
            steal_pct: 2.0,
            psi_some_pct: 10.0,
        };
        let busy = Contention::classified(11, Some(2.0), Some(0.0), Some(35.0), None, &limits);
        assert_eq!(
            render_contention(&busy, 1.0),
            "contention (1 s): contended: other runnable threads 2.0 ≥ 0.5; cpu pressure 35.0% ≥ 10% (other runnable threads 2.0, steal 0.0%, cpu pressure 35.0%)\n"
        );
        let quiet = Contention::classified(11, Some(0.0), None, None, Some(0.5), &limits);
        assert_eq!(
            render_contention(&quiet, 1.0),
            "contention (1 s): not contended (other runnable threads 0.0, steal unknown, cpu pressure unknown, of it pitwall's own cgroup 0.5%)\n"
        );
    }

    #[test]
    fn env_snapshot() {
        let mut fp = Fingerprint {
            hostname: "runner-1".into(),
            os: "linux".into(),
            arch: "x86_64".into(),
            kernel: "6.8.0".into(),
            cpu_model: "Example CPU".into(),
            logical_cpus: 64,
            memory_bytes: 512 << 30,
            cpu_governor: Some("performance".into()),
            pitwall_version: "0.1.0 (release)".into(),
            ..Default::default()
        };
        fp.gpus.push(GpuInfo {
            model: "NVIDIA H200".into(),
            uuid: Some("GPU-1234".into()),
            driver: Some("580.65.06".into()),
            extra: [
                ("pci_bus_id", json!("0000:3b:00.0")),
                ("numa_node", json!(0)),
                ("persistence_mode", json!(true)),
                ("topology", json!({"1": "NV18", "2": "SYS"})),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        });
        fp.extra.insert(
            "clocks".into(),
            json!({"mode": "observe", "device": 0, "locked_sm_mhz": null}),
        );
        fp.extra.insert("pinning".into(), json!({"policy": "prefer", "plan": {"cpus": [2, 3], "numa_node": 0, "source": "local_cpulist of GPU 0000:3b:00.0"}}));
        fp.extra.insert("host_checks".into(), json!([{"name": "cpu_governor", "value": "powersave", "ok": false, "advice": "cpupower frequency-set -g performance"}, {"name": "smt", "value": "unknown", "ok": true, "advice": null}]));
        fp.env.insert("CUDA_VISIBLE_DEVICES".into(), "0".into());
        insta::assert_snapshot!(render_env(
            &fp,
            &["gpu 0: clocks are not locked (observe mode)".to_string()]
        ));
    }
}
