from tests.fake_provider import Reply


async def test_streamed_text(harness):
    harness.fake.script(Reply(text="Hello there, friend", chunks=3))
    result = await harness.chat("say hello")
    assert result["status"] == "completed", result
    assert result["text"] == "Hello there, friend"
    kinds = harness.types_of(result["turnId"])
    assert kinds[0] == "turn_start" and kinds[-1] == "turn_end"
    deltas = [e["text"] for e in harness.of_turn(result["turnId"]) if e["type"] == "text_delta"]
    assert "".join(deltas) == "Hello there, friend" and len(deltas) == 3
