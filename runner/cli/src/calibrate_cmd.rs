//! `pitwall calibrate`: parses the arguments into a calibration request, measures the A/A pair
//! through the pipeline's use case (stored with role `calibration`), and prints what the
//! testbed's noise record now says.

use pitwall_engine::defaults;
use pitwall_pipeline::calibrate::{CalibrateRequest, calibrate};
use pitwall_pipeline::labels::Labels;
use pitwall_pipeline::request::RunRequest;
use pitwall_store::OpenMode;

use super::args::{CalibrateArgs, Format, Global};
use super::context::{current_dir, load_config, open_store};
use super::exit::{ExitClass, Failure};
use super::measuring::measuring;

/// `pitwall calibrate`: exit 0 when measured (an A/A pair calls nothing a regression), 3 when
/// the commit could not be built.
pub(super) fn cmd_calibrate(g: &Global, a: &CalibrateArgs) -> Result<ExitClass, Failure> {
    if a.labels.role.is_some() {
        return Err(Failure::rejected(
            "--role: a calibration's runs always have the role `calibration`".to_string(),
        ));
    }
    let config = load_config(g)?;
    let mut store = open_store(g, &config, OpenMode::Create)?;
    let cwd = current_dir()?;
    let request = CalibrateRequest {
        select: RunRequest {
            suites: a.suites.clone(),
            filter: a.bench.clone(),
        },
        repo: a.repo.clone().unwrap_or(cwd),
        commit: a.commit.clone().unwrap_or_else(|| "HEAD".to_string()),
        rounds: a.rounds.unwrap_or(defaults::CALIBRATION_ROUNDS),
        rebuild: a.rebuild,
    };
    let labels = Labels::from_env(&config, &a.labels.request());
    let result = measuring(g, &config, labels, None, |m| {
        calibrate(m, store.as_mut(), &request)
    })?;
    let Some(done) = result.map_err(Failure::of_measure)? else {
        return Ok(ExitClass::Infra);
    };
    let text = match a.format {
        Format::Table => pitwall_reports::calibration::render_table(&done.report),
        Format::Json => pitwall_reports::calibration::render_json(&done.report),
    };
    print!("{text}");
    Ok(if done.pair.partial() {
        ExitClass::Infra
    } else {
        ExitClass::Ok
    })
}
