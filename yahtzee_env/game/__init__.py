"""The pure game, no Gymnasium: dice and keep tables (`dice`), the rules and their variants
(`rules`), scorecards and turns (`engine`), best-of-five matches (`match`), the observation
vector (`observation`), text and image renders (`render`), the words about dice and boxes
(`words`) and a CPU seat's move (`cpu`)."""
