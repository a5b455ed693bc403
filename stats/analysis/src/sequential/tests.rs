//! The record of a sequential plan is read back as the same plan.

use super::*;

#[test]
fn a_plan_is_read_back_from_its_record() {
    for (first, max) in [(0, 0), (1, 1), (3, 15), (5, 2), (0, 7)] {
        let plan = SequentialPlan::until_decided(first, max, 0.05);
        assert_eq!(from_record(record(&plan), 0.05), plan, "{first}, {max}");
    }
    let r = record(&SequentialPlan::until_decided(3, 15, 0.01));
    assert_eq!(
        r,
        SequentialPlanRecord {
            first_look: 3,
            max_rounds: 15
        }
    );
}
