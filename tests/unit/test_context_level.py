from shiro_neko.agent.context_level import context_level


def test_level_comes_from_the_unrounded_share() -> None:
    assert context_level(8996, 10_000) == "amber"  # 89.96 %, shown as 90.0
    assert context_level(9000, 10_000) == "red"
    assert context_level(6666, 10_000) == "normal" and context_level(6667, 10_000) == "amber"
    assert context_level(0, 1) == "normal" and context_level(25_000, 10_000) == "red"
