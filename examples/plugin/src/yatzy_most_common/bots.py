"""The most-common bot: keeps the most common face, then writes the box that scores most."""

from collections import Counter

from harness.game.strategy import GameState, PerGameStrategy


class MostCommon(PerGameStrategy):
    """Keeps the most common face, then writes the box that scores most."""

    name = "most-common"
    description = "keeps the most common face, writes the box that scores most"
    classifier = {"stochastic": False, "lookahead": "none", "long_run_time": False}

    def keep_dice(self, state: GameState) -> list[int]:
        face, count = max(Counter(state.dice).items(), key=lambda fc: (fc[1], fc[0]))
        return [face] * count

    def choose_box(self, state: GameState) -> str:
        return max(state.options, key=lambda box: (state.options[box], -state.open_boxes.index(box)))
