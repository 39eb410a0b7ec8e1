"""The exact solver (`exact`: optimal expected score of every state, per rules preset), its
action values for observations (`oracle`) and the coach that grades and hints (`coach`)."""
