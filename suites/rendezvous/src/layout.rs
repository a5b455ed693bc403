//! Which rank this process is, how many there are and where rank 0 listens, read from the
//! launcher's environment, so one binary runs unchanged under torchrun, srun or alone.

/// pitwall's own rendezvous address (`host:port`), which wins over `MASTER_ADDR`/`MASTER_PORT`;
/// the way to give Slurm ranks an address (pitwall does not parse `SLURM_JOB_NODELIST`).
pub const ENV_RENDEZVOUS: &str = "PITWALL_RENDEZVOUS";

/// torchrun's variables.
pub const ENV_RANK: &str = "RANK";
pub const ENV_WORLD_SIZE: &str = "WORLD_SIZE";
pub const ENV_LOCAL_RANK: &str = "LOCAL_RANK";
pub const ENV_MASTER_ADDR: &str = "MASTER_ADDR";
pub const ENV_MASTER_PORT: &str = "MASTER_PORT";

/// Slurm's variables (set by `srun` for every task).
pub const ENV_SLURM_PROCID: &str = "SLURM_PROCID";
pub const ENV_SLURM_NTASKS: &str = "SLURM_NTASKS";
pub const ENV_SLURM_LOCALID: &str = "SLURM_LOCALID";

/// Who started the ranks, as the layout was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// No launcher variables: one process, world size 1.
    Single,
    /// torchrun (or anything setting `RANK`/`WORLD_SIZE`).
    Torchrun,
    /// Slurm's `srun`.
    Slurm,
}

impl Launcher {
    pub fn as_str(self) -> &'static str {
        match self {
            Launcher::Single => "single",
            Launcher::Torchrun => "torchrun",
            Launcher::Slurm => "slurm",
        }
    }
}

/// This process's place among the ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub rank: usize,
    pub world_size: usize,
    /// The rank among those on this node (the GPU a one-process-per-GPU rank drives).
    pub local_rank: usize,
    pub launcher: Launcher,
    /// Where rank 0 listens, `host:port`; `None` with world size 1.
    pub addr: Option<String>,
}

/// Why the launcher's variables do not describe a layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "{launcher} layout of {world_size} ranks needs {missing} (hint: set {ENV_RENDEZVOUS}=host:port of rank 0, or {ENV_MASTER_ADDR} and {ENV_MASTER_PORT})"
    )]
    Missing {
        launcher: &'static str,
        world_size: usize,
        missing: &'static str,
    },
    #[error("{var} is set but {missing} is not (hint: a launcher sets both)")]
    Partial {
        var: &'static str,
        missing: &'static str,
    },
    #[error("invalid {var}={value}: {reason}")]
    Invalid {
        var: &'static str,
        value: String,
        reason: String,
    },
}

impl Layout {
    /// One process alone.
    pub fn single() -> Layout {
        Layout {
            rank: 0,
            world_size: 1,
            local_rank: 0,
            launcher: Launcher::Single,
            addr: None,
        }
    }

    /// The layout of this process from its environment.
    pub fn from_env() -> Result<Layout, LayoutError> {
        Layout::from_vars(|k| std::env::var(k).ok())
    }

    /// The layout from `var` (a variable's value, `None` when unset or not unicode): torchrun's
    /// variables take precedence when `RANK` or `WORLD_SIZE` is set, else Slurm's when
    /// `SLURM_PROCID` is set, else world size 1.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Layout, LayoutError> {
        let get = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let (launcher, rank_var, world_var, local_var) =
            if get(ENV_RANK).is_some() || get(ENV_WORLD_SIZE).is_some() {
                (Launcher::Torchrun, ENV_RANK, ENV_WORLD_SIZE, ENV_LOCAL_RANK)
            } else if get(ENV_SLURM_PROCID).is_some() {
                (
                    Launcher::Slurm,
                    ENV_SLURM_PROCID,
                    ENV_SLURM_NTASKS,
                    ENV_SLURM_LOCALID,
                )
            } else {
                return Ok(Layout::single());
            };
        let number = |name: &'static str| -> Result<Option<usize>, LayoutError> {
            get(name)
                .map(|v| {
                    v.trim().parse::<usize>().map_err(|e| LayoutError::Invalid {
                        var: name,
                        value: v.clone(),
                        reason: e.to_string(),
                    })
                })
                .transpose()
        };
        let (rank, world_size) = match (number(rank_var)?, number(world_var)?) {
            (Some(r), Some(w)) => (r, w),
            (Some(_), None) => {
                return Err(LayoutError::Partial {
                    var: rank_var,
                    missing: world_var,
                });
            }
            (None, _) => {
                return Err(LayoutError::Partial {
                    var: world_var,
                    missing: rank_var,
                });
            }
        };
        if world_size == 0 || rank >= world_size {
            return Err(LayoutError::Invalid {
                var: rank_var,
                value: rank.to_string(),
                reason: format!("not below {world_var}={world_size}"),
            });
        }
        let local_rank = number(local_var)?.unwrap_or(0);
        let addr = if world_size == 1 {
            None
        } else {
            Some(rendezvous_addr(&get, launcher, world_size)?)
        };
        Ok(Layout {
            rank,
            world_size,
            local_rank,
            launcher,
            addr,
        })
    }

    /// Whether other ranks take part.
    pub fn is_multi_process(&self) -> bool {
        self.world_size > 1
    }
}

/// `PITWALL_RENDEZVOUS`, else `MASTER_ADDR:MASTER_PORT`.
fn rendezvous_addr(
    get: &impl Fn(&str) -> Option<String>,
    launcher: Launcher,
    world_size: usize,
) -> Result<String, LayoutError> {
    if let Some(addr) = get(ENV_RENDEZVOUS) {
        let addr = addr.trim().to_string();
        return match addr.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => Ok(addr),
            _ => Err(LayoutError::Invalid {
                var: ENV_RENDEZVOUS,
                value: addr,
                reason: "expected host:port".to_string(),
            }),
        };
    }
    let missing = |name| LayoutError::Missing {
        launcher: launcher.as_str(),
        world_size,
        missing: name,
    };
    let host = get(ENV_MASTER_ADDR).ok_or_else(|| missing(ENV_MASTER_ADDR))?;
    let port = get(ENV_MASTER_PORT).ok_or_else(|| missing(ENV_MASTER_PORT))?;
    let port: u16 = port.trim().parse().map_err(|_| LayoutError::Invalid {
        var: ENV_MASTER_PORT,
        value: port.clone(),
        reason: "expected a port number".to_string(),
    })?;
    Ok(format!("{}:{port}", host.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn layout(vars: &[(&str, &str)]) -> Result<Layout, LayoutError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Layout::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn no_variables_is_one_process() {
        assert_eq!(layout(&[]).unwrap(), Layout::single());
        assert!(!Layout::single().is_multi_process());
    }

    #[test]
    fn torchrun_variables_give_the_layout_and_address() {
        let l = layout(&[
            ("RANK", "3"),
            ("WORLD_SIZE", "8"),
            ("LOCAL_RANK", "1"),
            ("MASTER_ADDR", "node0"),
            ("MASTER_PORT", "29500"),
        ])
        .unwrap();
        assert_eq!(
            (l.rank, l.world_size, l.local_rank, l.launcher),
            (3, 8, 1, Launcher::Torchrun)
        );
        assert_eq!(l.addr.as_deref(), Some("node0:29500"));
        assert!(l.is_multi_process());
    }

    #[test]
    fn torchrun_wins_over_slurm() {
        let l = layout(&[
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "a"),
            ("MASTER_PORT", "1"),
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "16"),
        ])
        .unwrap();
        assert_eq!(
            (l.launcher, l.rank, l.world_size),
            (Launcher::Torchrun, 1, 2)
        );
    }

    #[test]
    fn slurm_needs_an_address_and_names_the_missing_variable() {
        let base = [
            ("SLURM_PROCID", "2"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_LOCALID", "0"),
        ];
        let err = layout(&base).unwrap_err();
        assert!(matches!(
            err,
            LayoutError::Missing {
                missing: "MASTER_ADDR",
                ..
            }
        ));
        let line = err.to_string();
        assert!(line.contains("MASTER_ADDR") && line.contains("PITWALL_RENDEZVOUS"));
        assert!(!line.contains('\n'));
        let mut vars = base.to_vec();
        vars.push(("PITWALL_RENDEZVOUS", "head:7000"));
        let l = layout(&vars).unwrap();
        assert_eq!((l.launcher, l.rank, l.world_size), (Launcher::Slurm, 2, 4));
        assert_eq!(l.addr.as_deref(), Some("head:7000"));
        let mut vars = base.to_vec();
        vars.push(("MASTER_ADDR", "head"));
        assert!(matches!(
            layout(&vars),
            Err(LayoutError::Missing {
                missing: "MASTER_PORT",
                ..
            })
        ));
    }

    #[test]
    fn one_task_needs_no_address() {
        let l = layout(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "1")]).unwrap();
        assert_eq!((l.world_size, l.addr), (1, None));
        assert_eq!(l.launcher, Launcher::Slurm);
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(matches!(
            layout(&[("RANK", "2"), ("WORLD_SIZE", "2")]),
            Err(LayoutError::Invalid { var: "RANK", .. })
        ));
        assert!(matches!(
            layout(&[("RANK", "x"), ("WORLD_SIZE", "2")]),
            Err(LayoutError::Invalid { var: "RANK", .. })
        ));
        assert!(matches!(
            layout(&[("RANK", "0")]),
            Err(LayoutError::Partial {
                missing: "WORLD_SIZE",
                ..
            })
        ));
        assert!(matches!(
            layout(&[
                ("RANK", "0"),
                ("WORLD_SIZE", "2"),
                ("PITWALL_RENDEZVOUS", "nohost")
            ]),
            Err(LayoutError::Invalid {
                var: "PITWALL_RENDEZVOUS",
                ..
            })
        ));
        assert!(matches!(
            layout(&[
                ("RANK", "0"),
                ("WORLD_SIZE", "2"),
                ("MASTER_ADDR", "h"),
                ("MASTER_PORT", "99999")
            ]),
            Err(LayoutError::Invalid {
                var: "MASTER_PORT",
                ..
            })
        ));
    }
}
