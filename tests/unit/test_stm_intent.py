"""Explicit long-term memory intent (docs/short-term-memory.md, "The nudge"): a prompt that asks for
something to be kept beyond this session suppresses the short-term memory nudge, so the model
reaches for `remember`. A table of phrasings both ways: requests fire, talk about remembering does
not (issue 36 item 2)."""

from __future__ import annotations

import pytest

from shiro_neko.agent.short_term_memory import explicit_long_term_intent

FIRES = [
    # "remember" as an imperative, with or without "that"
    "remember that the tests run with pytest -q",
    "remember we deploy on Fridays",
    "Remember I prefer tabs",
    "please remember you must run make first",
    "Remember: migrations run before seeds",
    "remember, the staging DB is read-only",
    "also remember to use tabs over spaces",
    "Fix the parser. Also, remember the fixtures live in tests/data",
    "remember this for next sessions",
    "Please memorise the release steps",
    "memorize this: the deploy key lives in vault",
    # asked of the model
    "Can you remember that the staging server is at 10.0.0.5?",
    "I want you to remember that we use tabs",
    "you should remember this: tests need docker",
    # forget / keep in mind / notes
    "don't forget that the CI uses Python 3.11",
    "don\u2019t forget we ship on Mondays",
    "Do not forget: we use snake_case for DB columns",
    "please don't forget the flag",
    "keep in mind that the ORM expects snake_case",
    "make a note that the docs live in the wiki",
    "write this down for next time",
    "jot this down: deploys happen on Fridays",
    "for future reference, the API is versioned under /v2",
    # save / store / memory
    "save this for later: bun test, not npm test",
    "store this permanently: the build needs Node 20",
    "note this permanently",
    "commit this to memory",
    "add to your long-term memory: the API is versioned under /v2",
    "put this in your memory: use pnpm",
    "store that in long-term memory",
    "save to memory: the linter is ruff",
    "store it in memory",
]

DOES_NOT_FIRE = [
    "I can't remember the command",
    "I don't remember where the config lives",
    "I remember the old API returned XML",
    "do you remember what we changed yesterday?",
    "Do you remember that bug from last week?",
    "do you remember when it broke?",
    "Remember when we broke the build?",
    "remember how the parser handles escapes?",
    "Remember the command we used yesterday?",
    "Can you remember the name of that flag?",
    "what do you remember about the deploy script",
    "what is remembered here",
    "Remembering state between requests is the hard part",
    "rememberMe cookie handling is broken",
    "forget it, let's do something else",
    "forget it, use a loop",
    "I forgot to mention the tests",
    "did you forget to close the file?",
    "fix the memory leak in the parser",
    "add a test for the memory cache",
    "Add the key to the memory map in allocator.c",
    "How much memory does this use?",
    "why does the process run out of memory?",
    "put the buffer in shared memory",
    "save the file and run the tests",
    "Store the result in a variable",
    "keep the output for the next step",
    "note that this test is flaky on CI",
    "we keep a log of requests",
    "the write-ahead log must be committed to disk",
    "fix the bug",
]


def test_the_table_has_at_least_thirty_phrasings_each_way() -> None:
    assert len(FIRES) >= 30 and len(DOES_NOT_FIRE) >= 30


@pytest.mark.parametrize("prompt", FIRES)
def test_a_request_to_keep_something_fires(prompt: str) -> None:
    assert explicit_long_term_intent(prompt)


@pytest.mark.parametrize("prompt", DOES_NOT_FIRE)
def test_talk_about_remembering_does_not_fire(prompt: str) -> None:
    assert not explicit_long_term_intent(prompt)


def test_no_prompt_is_no_intent() -> None:
    assert not explicit_long_term_intent(None) and not explicit_long_term_intent("")
