//! What a migration says it did, beside its script: the note of `Backfill::LocalRole`, which
//! names the working-tree runs it relabelled (`Store::migration_notes`).

/// Most run ids `local_role_note` names; the rest are counted.
const NOTE_MAX_IDS: usize = 10;

/// What `Backfill::LocalRole` says it did, given the runs it relabelled (id, start time),
/// oldest first: `None` when there were none.
pub(crate) fn local_role_note(runs: &[(String, String)]) -> Option<String> {
    if runs.is_empty() {
        return None;
    }
    let named: Vec<String> = runs
        .iter()
        .take(NOTE_MAX_IDS)
        .map(|(id, at)| format!("{id} ({at})"))
        .collect();
    let more = runs.len().saturating_sub(NOTE_MAX_IDS);
    let (what, are) = if runs.len() == 1 {
        ("working-tree run", "is")
    } else {
        ("working-tree runs", "are")
    };
    Some(format!(
        "store migrated: {} {what} stored as history {are} now role local (listed and comparable, never history): {}{} (hint: `pitwall run --commit SHA` measures a commit as history)",
        runs.len(),
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}
