"""Capacity planner: the cheapest hardware, batching settings, token limit and replica
count that keep a latency percentile within a target (``engine.planner``)."""
import streamlit as st

from app_pages.planner import data, hardware, inputs, plan_file, results, views
from engine.planner.plan import UNITS
from ui import share
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_table
from ui.uploads import to_safe_csv

TITLE = "Capacity planner"
ABOUT = ("For this traffic and this latency target: which hardware, which batch-size limit "
         "and batcher delay (or token limit), and how many replicas, at the lowest cost? "
         "Every combination of the ranges in the sidebar is priced with the lab's exact "
         "models and a short simulation; the cheapest are confirmed by longer simulations "
         "before the page calls them meeting the SLA. Assumptions and formulas: the How it "
         "works view.")


def finish() -> None:
    share.publish(inputs.FIELDS)


def candidates(workload: str, notices):
    """The hardware table (in an expander); a bad row is reported in ``notices`` and the
    last valid table stays in use."""
    with st.expander("Candidate hardware and prices (edit, add, remove)"):
        st.caption("One row per server a replica can run on: its price per hour, its board "
                   "power, and its batch time (GPU: α, τ0 fitted to a measured batch "
                   "profile; LLM: k1..k4). Edit any cell; add rows at the bottom.")
        in_use, problem = hardware.table_input(inputs.HARDWARE.key, workload)
    if problem:
        notices.error(f"Hardware table not used: {share.inert(problem)}. Still using the last "
                      f"valid table ({share.inert(hardware.summary(in_use))}).",
                      icon=":material/error:")
    return in_use


def answer(plan, choice) -> None:
    """The answer first: in words, then its numbers; when nothing meets the SLA, why."""
    st.subheader("Answer")
    conf = data.confirmation(plan)
    if plan.best is not None:
        st.success(share.inert(plan.answer), icon=":material/savings:")
        results.show_best(plan)
    elif conf["passed"]:
        st.warning(f"{share.inert(plan.answer)} They sit right at the target: confirming "
                   "more (Advanced) tries further ones.", icon=":material/warning:")
    else:
        st.error(share.inert(plan.answer), icon=":material/block:")
    results_table(results.rows(plan, choice.label, best=False), per_row=6)
    st.caption(data.confirmation_sentence(plan) if conf["tried"] else data.reason_counts(plan))


def tables(plan) -> None:
    if len(plan.spec.hardware) > 1 and len(plan.per_hardware):
        st.subheader("Each candidate at its cheapest")
        st.dataframe(data.per_hardware_table(plan), hide_index=True, width="stretch")
    if len(plan.ranked):
        st.subheader("Cheapest configurations meeting the SLA")
        st.dataframe(data.ranked_table(plan), width="stretch")
        st.caption(f"Top {min(data.TOP, len(plan.ranked))} of {len(plan.ranked):,}. "
                   "Confirmed: ✓ by the longer simulations, ✗ missed on them, — not "
                   "simulated again. " + data.reason_counts(plan))
    if len(plan.rejected):
        st.subheader("Why candidates fail")
        st.dataframe(data.rejected_table(plan), hide_index=True, width="stretch")


def exports(plan, spec, choice, note: str) -> None:
    row = action_row()
    row.download_button("Download the ranked table", lambda: data.ranked_csv_bytes(plan),
                        "capacity_plan_ranked.csv", "text/csv", key="plan_ranked_csv",
                        on_click="ignore", icon=":material/download:",
                        help="Every configuration meeting the SLA, cheapest first, as a "
                             "spreadsheet file (CSV) with the units in the column names.")
    plan_file.download_button(spec, row)
    report_button(TITLE, results.parameters(spec, choice.label),
                  lambda: views.report_sections(spec, choice), views.FORMULAS, views.NOTES,
                  "capacity_plan_report.html", where=row,
                  answer=results.rows(plan, choice.label), scenario=plan.answer)
    st.caption(plan_file.CLI + " The address bar holds a link to this plan." + (
        f" {note}" if note else ""))


def show_view(view: str, plan, spec, choice) -> None:
    if view in views.CHARTS:
        if not (len(plan.table) and plan.table["stable"].any()):
            st.info("No configuration keeps up with the load: nothing to draw.")
            return
        name = views.CHARTS[view]
        show_chart(views.figure(name, spec, choice), name)
        st.caption(views.CAPTIONS[name])
    elif view == views.ALL:
        table = data.all_table(plan)
        st.dataframe(table, hide_index=True, width="stretch")
        st.caption(f"The {min(len(table), data.ALL_ROWS):,} cheapest of {len(plan.table):,} "
                   "configurations priced (the CSV holds every one, units in the column "
                   "names).")
        st.download_button("Download every configuration",
                           lambda: to_safe_csv(plan.table.rename(columns=UNITS)),
                           "capacity_plan_all.csv", "text/csv", key="plan_all_csv",
                           on_click="ignore", icon=":material/download:",
                           help="The whole table as a spreadsheet file (CSV), units in the "
                                "column names.")
    else:
        formulas_panel(views.FORMULAS, views.NOTES, "planner",
                       "Assumptions, and what is conservative")


def run() -> None:
    inputs.prefill_from_link()
    share.restore(inputs.FIELDS)
    st.title(TITLE)
    st.caption(ABOUT)
    share.show_warnings()
    notices = st.container()
    workload = st.session_state[inputs.WORKLOAD.key]
    choice = inputs.sidebar()
    with st.sidebar.expander("Plan file (TOML)"):
        plan_file.upload_input()
    with notices:
        inputs.ensure_table(workload)
    hw = candidates(workload, notices)
    try:
        spec, note = inputs.plan_spec(hw, choice)
    except ValueError as err:
        notices.error(f"Plan not run: {share.inert(str(err))}. Change the inputs in the "
                      "sidebar.", icon=":material/error:")
        finish()
        return
    why = data.unsearchable(spec)
    if why:
        notices.error(f"Plan not run: {why}", icon=":material/error:")
        finish()
        return
    n, work = spec.n_configurations, data.plan_work(spec, choice)
    where = ("in this process" if data.executor_for(work) == "serial"
             else "on local processes, one per core")
    st.caption(f"{n:,} configurations ({data.grid_words(spec)}), priced {where}.")
    if work > inputs.AUTO_RUN_MAX and not data.plan.ready(spec, choice) and not st.button(
            f"Price {n:,} configurations", key="plan_run", type="primary"):
        st.info("A plan this large takes a while: press the button to run it, or download "
                "the plan file and run it on a cluster.", icon=":material/hourglass_top:")
        plan_file.download_button(spec)
        st.caption(plan_file.CLI)
        finish()
        return
    bar = LazyProgress(f"Pricing {n:,} configurations…")
    plan = data.plan(spec, choice, bar)
    bar.empty()
    answer(plan, choice)
    tables(plan)
    exports(plan, spec, choice, note)
    view = st.segmented_control("View", inputs.VIEWS, key=inputs.VIEW.key, required=True)
    show_view(view, plan, spec, choice)
    finish()


run()
