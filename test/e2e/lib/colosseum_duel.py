#!/usr/bin/python3
"""Drives the Colosseum's page in headless Chromium through one full duel and the live page
through its first finished requests; prints what it saw as one JSON object (checked by
test/e2e/proxy_colosseum_chromium.sh).

usage: colosseum_duel.py BASE_URL COLOSSEUM.png LIVE.png
"""
import json
import sys

from cdp_browser import Browser

base, screenshot, live_screenshot = sys.argv[1], sys.argv[2], sys.argv[3]
q = lambda selector, what="textContent": "document.querySelector(%s).%s" % (json.dumps(selector), what)
seen = {}
with Browser() as b:
    b.open(base + "/zeus/colosseum")
    b.wait_for(q("#send", "disabled") + " === false", what="the page")
    b.wait_for(q("#no-votes", "hidden") + " === false", what="the empty leaderboard")
    b.evaluate(q("#prompt", "value") + " = 'Why is the sky blue?'")
    b.evaluate(q("#send", "click()"))
    # Both answers stream in, anonymously: no model name before the vote.
    b.wait_for(q("#side-0 .answer") + ".length > 0 && " + q("#side-1 .answer") + ".length > 0",
               what="both answers to start")
    seen["names_before_vote"] = [b.evaluate(q("#side-0 .name")), b.evaluate(q("#side-1 .name"))]
    b.wait_for(q("#vote-0", "disabled") + " === false", what="both answers to end")
    seen["answers"] = [b.evaluate(q("#side-0 .answer")), b.evaluate(q("#side-1 .answer"))]
    seen["error_after_answers"] = b.evaluate(q("#error"))
    # Vote for the longer answer (the costlier model, 'big'): the energy vote follows.
    longer = 0 if len(seen["answers"][0]) > len(seen["answers"][1]) else 1
    seen["voted"] = longer
    b.evaluate(q("#vote-%d" % longer, "click()"))
    b.wait_for(q("#reveal") + ".length > 0", what="the reveal")
    seen["reveal"] = b.evaluate(q("#reveal"))
    seen["state"] = b.evaluate(q("#reveal", "dataset.state"))
    seen["names_after_vote"] = [b.evaluate(q("#side-0 .name")), b.evaluate(q("#side-1 .name"))]
    seen["energies"] = [b.evaluate(q("#side-0 .energy")), b.evaluate(q("#side-1 .energy"))]
    seen["worth_shown"] = b.evaluate(q("#worth", "hidden")) is False
    b.wait_for("document.querySelectorAll('#leaderboard tr.model').length === 2",
               what="the leaderboard after the vote")
    b.screenshot(screenshot)
    b.evaluate(q("#worth-yes", "click()"))
    b.wait_for(q("#thanks") + ".includes('energy vote')", what="the energy vote's thanks")
    b.wait_for("[...document.querySelectorAll('#leaderboard tr.model td')]"
               ".some(td => td.textContent.startsWith('100 % of 1'))",
               what="the worth-it rate in the leaderboard")
    seen["leaderboard"] = b.evaluate(
        "[...document.querySelectorAll('#leaderboard tr.model')]"
        ".map(tr => [...tr.children].map(td => td.textContent))")
    seen["error"] = b.evaluate(q("#error"))

    # The live page: its snapshot shows the two finished answers, by model, with their spans.
    b.open(base + "/zeus/")
    b.wait_for(q("#status") + " === 'live'", what="the live page's event stream")
    b.wait_for("document.querySelectorAll('#models tr.model').length === 2",
               what="the live page's models")
    b.wait_for("document.querySelectorAll('#chart polyline.power').length === 2",
               what="the live page's power lines")
    seen["live_models"] = b.evaluate(
        "[...document.querySelectorAll('#models tr.model')]"
        ".map(tr => [...tr.children].map(td => td.textContent))")
    seen["live_spans"] = b.evaluate("document.querySelectorAll('#chart rect.span').length")
    seen["live_legend"] = b.evaluate(
        "[...document.querySelectorAll('#legend span')].map(s => s.textContent)")
    seen["live_finished"] = b.evaluate(q("#finished"))
    seen["live_error"] = b.evaluate(q("#error"))
    b.screenshot(live_screenshot)
print(json.dumps(seen))
