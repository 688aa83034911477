"""Capacity planner: the cheapest hardware, settings and server count that keep the SLA's
latency percentiles within their targets (``engine.planner``), for every workload family
it declares (GPU batching, the LLM batch model, LLM serving colocated and disaggregated)."""
import streamlit as st

from app_pages.planner import (data, disaggregation, hardware, hardware_input, inputs,
                               plan_file, results, tables, views)
from engine.planner.plan import UNITS
from ui import share
from ui.export import report_button, show_chart
from ui.budget import long_queue
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_table
from ui.uploads import to_safe_csv

TITLE = "Capacity planner"
ABOUT = ("For this traffic and this latency target: which hardware, which settings (batch "
         "size and delay, token limit, or a serving engine's limits), and how many servers, "
         "at the lowest cost? Every combination of the ranges in the sidebar is priced with "
         "the lab's models and a short simulation or approximation; the cheapest are "
         "confirmed by longer simulations before the page calls them meeting the SLA. "
         "Assumptions and formulas: the How it works view.")


def finish() -> None:
    share.publish(inputs.FIELDS)


def candidates(workload: str, notices):
    """The hardware table (in an expander); a bad row is reported in ``notices`` and the
    last valid table stays in use."""
    with st.expander("Candidate hardware and prices (edit, add, remove)"):
        in_use, problem = hardware_input.table_input(inputs.HARDWARE.key, workload)
    if problem:
        notices.error(f"Hardware table not used: {share.inert(problem)}. Still using the last "
                      f"valid table ({share.inert(hardware.summary(in_use))}).",
                      icon=":material/error:")
    return in_use


def answer(plan, label: str) -> None:
    """The answer first: in words, then its numbers; when nothing meets the SLA, why."""
    st.subheader("Answer")
    conf = results.confirmation(plan)
    if plan.best is not None:
        st.success(share.inert(plan.answer), icon=":material/savings:")
        results.show_best(plan)
    elif conf["passed"]:
        st.warning(f"{share.inert(plan.answer)} They sit right at the target: confirming "
                   "more (Advanced) tries further ones.", icon=":material/warning:")
    else:
        st.error(share.inert(plan.answer), icon=":material/block:")
    results_table(results.rows(plan, label, best=False), per_row=6)
    fewer = results.fewer_texts(plan)
    if fewer:
        st.markdown("**One server fewer**, simulated the same way:\n"
                    + "\n".join(f"- {share.inert(t)}" for t in fewer))
    st.caption(results.confirmation_sentence(plan) if conf["tried"]
               else tables.reason_counts(plan))


def show_tables(plan) -> None:
    if len(plan.per_hardware) > 1:
        st.subheader("Each candidate at its cheapest")
        st.dataframe(tables.per_hardware_table(plan), hide_index=True, width="stretch")
    if len(plan.ranked):
        st.subheader("Cheapest configurations meeting the SLA")
        st.dataframe(tables.ranked_table(plan), width="stretch")
        st.caption(f"Top {min(tables.TOP, len(plan.ranked))} of {len(plan.ranked):,}. "
                   "Confirmed: ✓ by the longer simulations, ✗ missed on them, — not "
                   "simulated again. " + tables.reason_counts(plan))
    if len(plan.rejected):
        st.subheader("Why candidates fail")
        st.dataframe(tables.rejected_table(plan), hide_index=True, width="stretch")


def exports(plan, key, serving, note: str) -> None:
    spec, choice, workload = key
    file_spec, file_note = spec, ""
    if serving is not None and serving.trace is not None:
        name, file_note = serving.file_note()
        file_spec = spec.with_(token_trace=name)
    row = action_row()
    row.download_button("Download the ranked table", lambda: tables.ranked_csv_bytes(plan),
                        "capacity_plan_ranked.csv", "text/csv", key="plan_ranked_csv",
                        on_click="ignore", icon=":material/download:",
                        help="Every configuration meeting the SLA, cheapest first, as a "
                             "spreadsheet file (CSV) with the units in the column names.")
    plan_file.download_button(file_spec, row)
    formulas, notes = views.how_it_works(spec)
    report_button(TITLE, results.parameters(spec, choice.label, serving),
                  lambda: views.report_sections(*key), formulas, notes,
                  "capacity_plan_report.html", where=row,
                  answer=results.rows(plan, choice.label), scenario=plan.answer)
    st.caption(" ".join(t for t in (plan_file.CLI, "The address bar holds a link to this plan.",
                                    note, file_note) if t))


def show_view(view: str, plan, key) -> None:
    spec = key[0]
    if view in views.CHARTS:
        if not (len(plan.table) and plan.table["stable"].astype(bool).any()):
            st.info("No configuration keeps up with the load: nothing to draw.")
            return
        names = (["cost_vs_energy"] if view == views.ENERGY
                 else [n for n, _, _ in views.latency_charts(spec)])
        caption = views.CAPTIONS[views.CHARTS[view]]
        for name in names:
            show_chart(views.figure(name, *key), name)
        st.caption(caption)
    elif view == views.ALL:
        table = tables.all_table(plan)
        st.dataframe(table, hide_index=True, width="stretch")
        st.caption(f"The {min(len(table), tables.ALL_ROWS):,} cheapest of {len(plan.table):,} "
                   "configurations priced (the CSV holds every one, units in the column "
                   "names).")
        st.download_button("Download every configuration",
                           lambda: to_safe_csv(plan.table.rename(columns=UNITS)),
                           "capacity_plan_all.csv", "text/csv", key="plan_all_csv",
                           on_click="ignore", icon=":material/download:",
                           help="The whole table as a spreadsheet file (CSV), units in the "
                                "column names.")
    elif view == views.DISAGGREGATION:
        disaggregation.show(*key)
    else:
        formulas, notes = views.how_it_works(spec)
        formulas_panel(formulas, notes, "planner", "Assumptions, and what is conservative")


def wait_for_button(spec, key) -> bool:
    """Whether a plan too large to run as the inputs change waits for its button (then
    the page says so and offers the plan file)."""
    if not data.waits_for_button(spec, key[1]) or data.plan.ready(*key) or st.button(
            f"Price {spec.n_configurations:,} configurations", key="plan_run",
            type="primary"):
        return False
    why = (f"confirming the {spec.confirm} cheapest simulates whole fleets, about "
           f"{data.seconds(spec, key[1]):,.0f} s in all" if data.confirm_work(spec)
           > data.AUTO_CONFIRM_MAX else "it takes a while")
    st.info(f"A plan this large waits for you ({why}): press the button to run it, or "
            "download the plan file and run it on a cluster.", icon=":material/hourglass_top:")
    plan_file.download_button(spec)
    st.caption(plan_file.CLI)
    return True


def run() -> None:
    inputs.prefill_from_link()
    share.restore(inputs.FIELDS)
    st.title(TITLE)
    st.caption(ABOUT)
    share.show_warnings()
    notices = st.container()
    workload = st.session_state[inputs.WORKLOAD.key]
    with notices:
        inputs.ensure_table(workload)
    choice, serving = inputs.sidebar()
    with st.sidebar.expander("Plan file (TOML)"):
        plan_file.upload_input()
    hw = candidates(workload, notices)
    try:
        spec, note = inputs.plan_spec(hw, choice, serving)
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
    key = (spec, choice, None if serving is None else serving.workload)
    work = data.plan_work(spec, choice)
    where = ("in this process" if data.executor_for(work) == "serial"
             else "on the server's shared worker processes, one per core")
    st.caption(f"{spec.n_configurations:,} configurations ({data.grid_words(spec)}), priced "
               f"{where}.")
    if wait_for_button(spec, key):
        finish()
        return
    running, waiting = long_queue()
    if running and not data.plan.cached(*key):
        ahead = running + waiting
        st.info(f"{ahead} plan{'s' if ahead != 1 else ''} from other sessions "
                f"{'are' if ahead != 1 else 'is'} running or waiting on this server: yours "
                "starts when a worker is free.", icon=":material/hourglass_top:")
    bar = LazyProgress(f"Pricing {spec.n_configurations:,} configurations…")
    plan = data.plan(*key, bar=bar)
    bar.empty()
    answer(plan, choice.label)
    show_tables(plan)
    exports(plan, key, serving, note)
    offered = views.views_of(spec)
    if st.session_state.get(inputs.VIEW.key) not in offered:
        st.session_state[inputs.VIEW.key] = offered[0]
    view = st.segmented_control("View", offered, key=inputs.VIEW.key, required=True)
    show_view(view, plan, key)
    finish()


run()
