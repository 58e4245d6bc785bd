"""Seeded realisations of what the scripted user says, so repetitions of a scenario differ.

Every act the scripted user performs (open with the objective, give slot values, agree to a
confirmation, answer a question, thank and leave, ...) has a set of realisations written
here; the conversation's RNG picks one per use, and the order in which slot values are given
and how each is phrased ("my phone number is 503-555-0142", "503-555-0142 for the phone
number", "the phone number: ...") vary the same way. Same seed, same text: determinism per
conversation is kept, only the seed changes the wording. Values are always written out in
full, so the assistant's grounding and the validator find them.

Every ``agree`` realisation is one the assistant reads as a yes
(:func:`simulation.agents.text.is_affirmative`); a test checks it.

Example:
    >>> import random
    >>> rng = random.Random(0)
    >>> pick("give", rng) in PHRASES["give"]
    True
    >>> facts_sentence([("order ID", "O1")], random.Random(1))
    'Let me give you what I have: the order ID should be O1.'
"""

from __future__ import annotations

import random
import re
from functools import cache
from typing import NamedTuple

from simulation.agents.phrasebank import load_phrasebank

__all__ = [
    "ASSISTANT",
    "PHRASES",
    "Fact",
    "answer_sentence",
    "facts_sentence",
    "objective_sentence",
    "pick",
    "say",
    "variants",
]

PHRASES: dict[str, tuple[str, ...]] = {
    "agree": (
        "Yes, please go ahead.",
        "Yes, go ahead.",
        "Sounds good, please do.",
        "Yep, that's right. Go ahead.",
        "Sure, do it.",
        "Okay, please proceed.",
        "That's correct, go ahead.",
        "Perfect, yes.",
        "Yes, that's right.",
        "Correct, please go ahead.",
        "Okay, do it.",
        "Yeah, that works. Go ahead.",
        "Absolutely, yes.",
        "Right, go ahead with that.",
        "Yup, exactly that.",
    ),
    # a yes that repeats one value of the confirmation, as people check what they heard
    "agree_value": (
        "Yes, {value} is right.",
        "Correct, {value}. Go ahead.",
        "Yes, {value} works.",
        "That's right, {value}.",
        "Yep, {value} sounds good.",
        "Yes, {value}, exactly.",
        "Okay, {value} is fine, go ahead.",
        "Sure, {value} it is.",
        "Perfect, {value} is what I wanted.",
        "Yes please, {value} is correct.",
        "Right, {value}. Please go ahead.",
        "Yes, that's it: {value}.",
        "Sounds good, {value} is perfect.",
        "Yes, I can confirm {value}.",
        "Exactly, {value}. Yes, thanks for checking.",
        "Okay, {value} is right, yes.",
    ),
    "give": (
        "Sure, here you go.",
        "Of course.",
        "Here it is.",
        "No problem.",
        "Sure thing.",
        "Okay.",
        "Here's what you need.",
        "Right.",
        "Got it.",
        "Here goes.",
        "Sure, one second.",
        "Happy to.",
        "Ah, right.",
        "Okay, so.",
        "Right, I have it.",
        "Sure, I have that here.",
        "Yes, of course.",
        "Hang on. Okay.",
        "Oh, sure.",
        "Good question.",
        "Hmm, okay.",
        "Fair enough.",
    ),
    "another": (
        "Here is another detail.",
        "One more thing.",
        "Also, in case it helps:",
        "Oh, and another detail.",
        "Also worth mentioning:",
        "Something else you may need:",
        "Before I forget:",
        "Oh, this might matter too.",
        "I should also mention this.",
        "Not sure if you need it, but:",
        "One other detail.",
    ),
    "thanks_done": (
        "Thanks, that is all I needed.",
        "Great, thank you, that's everything.",
        "Perfect, thanks for your help.",
        "That's all, thank you!",
        "Wonderful, thanks a lot.",
        "Thank you, that covers it.",
    ),
    "thanks_declined": (
        "I see. Thanks for explaining, I will think about the alternatives.",
        "Okay, understood. I'll consider the other options, thanks.",
        "Alright, thanks for letting me know. I'll think it over.",
        "That's a pity, but thanks for the suggestions.",
    ),
    # the assistant's reply did not tell what the user asked for ("{what}": "the balance")
    "still_need": (
        "I still need {what}.",
        "Sorry, but you haven't told me {what} yet.",
        "That doesn't answer my question. What about {what}?",
        "Hang on, I asked about {what}.",
        "Okay, but what is {what}?",
        "I'm still waiting to hear {what}.",
        "Could you just tell me {what}, please?",
        "Right, and {what}?",
        "You haven't said {what}. That's what I need.",
        "I came here for {what}, though.",
        "Thanks, but I still don't know {what}.",
        "Can you check {what} for me?",
    ),
    # a completion claim on a request that could not be done as asked: the user asks again
    "unclear_outcome": (
        "Sorry, I'm not sure what happened with my request. Did it go through?",
        "Wait, what exactly was done?",
        "I'm confused. Is my request actually sorted?",
        "Can you tell me what actually happened?",
        "Hold on, did that really work?",
        "That's not clear to me. What's the status of my request?",
    ),
    "what_else": (
        "Okay. What else do you need from me?",
        "Alright. Anything else you need?",
        "Okay, what more do you need to know?",
        "Is there anything more you need from me?",
        "Okay. Do you need anything else from me?",
        "Sure. What's next?",
        "Alright, what else should I tell you?",
        "Fine. Anything more to sort out on my side?",
    ),
    "change_of_plan": (
        "Actually, change of plan.",
        "Wait, I've changed my mind.",
        "Sorry, actually I need something different.",
        "Hold on, let me change that.",
        "Oh wait, something's come up.",
        "Scratch that, plans have changed.",
        "Hmm, on second thought I need to change it.",
        "Sorry, I just checked my calendar and need a change.",
        "Actually, can we change one thing?",
        "One second, I need to adjust that.",
        "My mistake, I need something slightly different.",
        "Just heard back from the others, so a change.",
    ),
    "help": ("Can you help me?", "Hello? Can you help me with this?"),
}

ASSISTANT: dict[str, tuple[str, ...]] = {
    # declines: each has a decline cue ("sorry", "unfortunately", "can't", "unable to") and,
    # where it offers something, an alternative cue ("instead", "option", "alternative")
    "decline_lead": (
        "I'm sorry.",
        "Unfortunately, I can't do that as asked.",
        "I'm sorry, but I'm unable to do that.",
        "I checked, and unfortunately it isn't possible.",
        "I'm afraid I can't do that.",
        "I'm sorry, that isn't something I can do.",
        "Unfortunately, that won't be possible.",
        "I looked into it, and I'm sorry, but it can't be done.",
        "I'm afraid I cannot arrange that.",
        "I'm sorry, I'm not able to do that one.",
        "I checked the details, and unfortunately I can't go ahead.",
        "I'm sorry to say that won't work.",
        "Unfortunately I have to say no to that one.",
        "I'm sorry, I can't make that happen.",
        "Having checked, I'm afraid I cannot do this as requested.",
        "I'm sorry, my hands are tied on this one.",
        "Unfortunately, the rules don't let me do that.",
        "I'm sorry, but that's not allowed here.",
        "I wish I could, but unfortunately it isn't possible.",
    ),
    "empty_offer": (
        "I'm sorry, {tool} found nothing for your request. As alternatives, I can search once "
        "more{change}. Shall I search again?",
        "Unfortunately {tool} came back empty. I can search once more{change} instead. Shall I "
        "try that?",
        "I'm sorry, nothing turned up from {tool}. One option is to search again{change}. Should "
        "I search again?",
        "{tool} returned no matches, unfortunately. As an alternative I could search once "
        "more{change}. Do you want me to search again?",
        "I'm sorry, {tool} had no results this time. Another option is a second search{change}. "
        "Would you like me to try again?",
        "Unfortunately there were no results from {tool}. I could instead search "
        "again{change}. Shall I do that?",
        "I'm sorry, {tool} turned up nothing. One option is a new search{change}. Want me to try?",
        "I'm sorry, {tool} came back with no matches. Instead, I could search again{change}. "
        "Should I?",
        "Unfortunately {tool} didn't find anything suitable. An alternative is to search "
        "again{change}. Do you want me to do that?",
    ),
    "empty_again": (
        "I'm sorry, {tool} still found nothing. Instead, you could adjust your request and I "
        "can search with the new details.",
        "Unfortunately {tool} came back empty a second time. One option is to change what you "
        "are looking for, and I'll search again.",
        "I'm sorry, still no results from {tool}. You could try different details instead, and "
        "I'll run it with those.",
    ),
    "retry_offer": (
        "The system I need to {action} is not responding right now ({code}: {message}). Shall "
        "I try again?",
        "I tried to {action}, but the service didn't answer ({code}: {message}). Should I give "
        "it another go?",
        "Sorry for the wait: I couldn't {action} because the system timed out or failed "
        "({code}: {message}). Do you want me to try once more?",
        "It looks like the service behind this is having trouble ({code}: {message}), so I "
        "couldn't {action} yet. Shall I retry?",
    ),
    "still_failing": (
        "I'm sorry, I still can't {action}: the system keeps failing ({code}: {message}). "
        "Instead, you could try again later, and I can help with anything else.",
        "Unfortunately the service is still down ({code}: {message}), so I can't {action} "
        "right now. One option is to try again a bit later; I can help with something else "
        "meanwhile.",
        "I'm sorry, it's still not working ({code}: {message}). I'm unable to {action} at the "
        "moment, but you could come back later instead, or I can help with anything else.",
    ),
    "resubmit": (
        "My request to {action} was refused: {message} Shall I resubmit it now?",
        "The system turned down the request to {action}: {message} Shall I send it again now?",
        "That request to {action} was refused. {message} Should I resubmit it?",
        "I tried to {action}, but it was refused. {message} Do you want me to resubmit it?",
    ),
    "refused_decline": (
        "I'm sorry, I could not {action}: {message} Instead, I can help you with another "
        "option, or you could contact the team directly.",
        "Unfortunately I was unable to {action}: {message} As an alternative, I can help with "
        "another option, or you could contact the team directly.",
        "I'm sorry, the request to {action} did not go through: {message} Instead, I can look "
        "at another option with you, or you could reach the team directly.",
        "Unfortunately, the request to {action} was turned down: {message} I can help you find "
        "an alternative instead, or you could get in touch with the team directly.",
        "I'm sorry, I tried to {action}, but the system said no: {message} If you like, I can "
        "look at another option instead, or the team can help you directly.",
        "Unfortunately I can't {action} here. {message} One option is to try something else "
        "with me; you could also contact the team yourself.",
        "I'm sorry, that didn't work: I couldn't {action}. {message} I can suggest an "
        "alternative instead, or you could speak to the team directly.",
    ),
    # the closing report when a refused step was replaced by an alternative; each has a
    # completion cue, a decline cue and an alternative cue
    "done_with_change": (
        "All done, with one change. I'm sorry: {rules}. Instead, here is the result: {facts}.",
        "That's all done, with one difference. I'm sorry: {rules}. So instead, here is what "
        "went through: {facts}.",
        "Everything is done except one thing. Unfortunately {rules}; as the alternative, this "
        "is what I set up: {facts}.",
        "You're all set, with one change. I'm sorry, {rules}. Here is what we did instead: "
        "{facts}.",
    ),
    # asks for slots: each names them and ends with "?" (the user answers what is named)
    "ask": (
        "Could you tell me {labels}?",
        "May I have {labels}, please?",
        "Can you give me {labels}?",
        "I'll need {labels} to continue. Could you share that?",
        "What is {labels}?",
        "Sure. And {labels}?",
        "Happy to help with that. First, could I get {labels}?",
        "To look into it I'll need {labels}. What is it?",
        "Could you let me know {labels}?",
        "Before I continue, can you share {labels}?",
        "One thing I still need: {labels}. Could you tell me?",
        "Got it. Can you tell me {labels} as well?",
        "Thanks. Would you mind giving me {labels}?",
    ),
    # asks to confirm a write: each carries a confirmation cue the user recognises
    # {args} may open with a preposition ("on May 1st, for 4 people"): no "with" before it
    "confirm": (
        "{lead} {action}: {args}. {question}",
        "{lead} {action}: {args}. {question}",
        "{lead} {action} ({args}). {question}",
        "{lead} {action} - {args}. {question}",
    ),
    # a confirmation in one question (each carries a cue of `asks_confirmation`)
    "confirm_ask": (
        "Shall I {action}: {args}?",
        "Want me to {action} - {args}?",
        "Should I go ahead and {action} ({args})?",
        "Would you like me to {action}: {args}?",
        "Do you want me to {action} with these details: {args}?",
        "Okay if I go ahead and {action}: {args}?",
        "Can I go ahead and {action}? That's {args}.",
        "Are you happy for me to {action} - {args}?",
        "For the record: {args}. Shall I {action} now?",
        "Is it okay if I go ahead and {action}: {args}?",
        "Happy for me to {action}? That's {args}.",
        "Ready for me to {action} ({args})?",
        "Can I proceed to {action}: {args}?",
        "May I proceed and {action} - {args}?",
        "Here's what I have: {args}. Good to go? Then I'll {action}.",
    ),
    # closes a confirmation: each carries a cue of `asks_confirmation`
    "confirm_question": (
        "Shall I go ahead?",
        "Would you like me to go ahead?",
        "Should I proceed?",
        "Do you want me to go ahead?",
        "Is that right, and shall I go ahead?",
        "Would you like me to do that now?",
        "Shall I do it?",
        "Do you want me to submit it?",
        "Shall I send it through?",
        "Should I go ahead with that?",
        "Would you like me to proceed?",
        "Is it okay to proceed?",
        "Want me to go ahead?",
        "Does that look right? Shall I continue?",
        "Everything correct? Should I submit it?",
        "Please check the details: shall I go ahead?",
        "May I go ahead?",
        "Can I go ahead and submit it?",
        "If that all looks right, shall I go ahead?",
        "Do you want me to carry on?",
        "Okay to proceed?",
        "Shall I book it like that?",
        "Should I lock that in?",
        "Want me to submit that for you?",
        "Would you like me to finalise it?",
        "Shall I make it official?",
        "Do you want me to put that through?",
        "Is everything in order, and shall I continue?",
        "Any changes, or shall I go ahead?",
        "Should I confirm it on my end?",
        "Would you like me to complete it now?",
        "If you're happy with that, shall I proceed?",
        "Does that match what you want, and should I submit it?",
        "Shall I take care of it now?",
        "Do you want me to go through with it?",
        "Can I go ahead with these details?",
        "Let me know: shall I proceed?",
        "Is it all correct? Should I go on?",
        "Should I send that off now?",
        "Ready when you are: shall I submit it?",
        "Is it okay if I submit it now?",
        "Are you happy for me to put it through?",
        "Good to go?",
        "Can I proceed?",
        "May I proceed with this?",
        "Okay if I send it off?",
        "Alright if I finalise this?",
        "Are you ready for me to submit?",
        "All good to go on my end, okay if I confirm it?",
        "Happy for me to complete it?",
    ),
    "ready": (
        "I am ready to",
        "I can now",
        "Everything is in place to",
        "I have what I need to",
        "Next, I would",
        "I'm about to",
        "I'm set to",
        "The next step is to",
        "All that's left is to",
        "I can go ahead and",
        "What I would do now is",
        "My plan is to",
        "I'd like to",
        "Now I just need your okay to",
        "Here's what I'm about to do:",
        "Once you confirm, I'll",
        "Let me run it by you first. I'm going to",
        "I've got everything needed to",
        "We're ready to",
        "So the plan is to",
        "With your go-ahead I will",
        "If you agree, I'll",
        "This is what I'll do: I'll",
        "Here's the request I've prepared to",
        "I've lined everything up to",
    ),
    # the reasoning of a step: what the conversation shows, never the gold workflow
    "think_missing": (
        "What {tool} still lacks is {labels}; the user is the one who knows it, so I ask.",
        "{tool} takes {labels}, and nothing said so far gives it; a question comes first.",
        "Guessing {labels} could send {tool} after the wrong record, so I ask for it.",
        "No {labels} yet, which {tool} depends on; I put the question to the customer.",
        "I hold off on {tool}: {labels} has not been mentioned, and only they can tell me.",
        "The request needs {tool}, and {tool} needs {labels}. Not given yet, so I ask.",
        "{tool} needs {labels}, which the user has not given yet; I ask instead of guessing.",
        "I cannot call {tool} without {labels}, and the user has not said it; I ask for it.",
        "{labels} is still missing for {tool}; rather than guess, I ask the user.",
        "To run {tool} I would have to invent {labels}; I ask the user for it instead.",
        "The user has not mentioned {labels} yet, and {tool} cannot do without it, so I ask.",
        "Before {tool} can run I need {labels} from the user; making it up is not an option.",
        "{labels} has not come up yet, so {tool} has to wait until the user tells me.",
        "Only the user can give me {labels}, which {tool} requires; I ask.",
        "I am one detail short for {tool}: {labels}. I ask the user rather than assume.",
    ),
    "think_confirm": (
        "Before {tool} goes out I want a clear yes on {args}; changes like this are hard to undo.",
        "{tool} would change the customer's records; I lay out {args} and let them decide.",
        "All set for {tool} ({args}), but a write waits for the customer to agree.",
        "I repeat the details for {tool} ({args}) so a wrong value can be caught before it sticks.",
        "No write without consent: I ask the customer to check {args} before {tool}.",
        "If any of {args} is wrong, {tool} would act on it, so the customer confirms first.",
        "{tool} is a write and cannot be undone silently, so I confirm {args} with the user first.",
        "{tool} changes what is on record, so before calling it I read back {args} and ask.",
        "Writing with {tool} needs the user's go-ahead; I confirm {args} first.",
        "This is the step that commits the change ({tool}); I repeat {args} and wait for a yes.",
        "Once {tool} runs it takes effect, so the user should hear {args} and agree first.",
        "I have what {tool} needs ({args}), but a change like this gets the user's explicit okay.",
        "Rather than act on my reading of the request, I check {args} with the user before {tool}.",
        "A write like {tool} should not surprise the user; I spell out {args} and ask.",
        "{tool} is ready to go with {args}; the user gets the last word before I send it.",
        "I read {args} back to the user and only call {tool} after they agree.",
    ),
    "think_stale": (
        "Before {tool} I notice the {slot} the user gave is {value}; I check it before acting.",
        "The user's latest {slot} is {value}, not what I would have used for {tool}; I ask first.",
        "{slot} changed in the conversation (now {value}); before {tool} I make sure which one "
        "holds.",
        "Two values for {slot} came up, the latest being {value}; I confirm it before {tool}.",
    ),
    "think_resubmit": (
        "{tool} was refused with {code}; the rule asks for the user's confirmation, so I explain "
        "it and offer to resubmit.",
        "The {code} from {tool} is a confirmation the rule wants, not a dead end; I explain and "
        "offer to resend it.",
        "{tool} can go through once the user confirms what the rule asks ({code}); I ask them.",
    ),
    "think_call": (
        "Nothing stops {tool} now{grounded}.",
        "{tool} fits what the customer asked{grounded}; calling it.",
        "Let me run {tool}{grounded}.",
        "Enough is known for {tool}{grounded}, so it runs now.",
        "My next move is {tool}{grounded}.",
        "The details line up for {tool}{grounded}; I send the call.",
        "{tool} will tell me what I need{grounded}.",
        "To answer this I need {tool}{grounded}.",
        "Now {tool}{grounded}.",
        "I look this up with {tool}{grounded}.",
        "I can call {tool} now{grounded}.",
        "Everything {tool} needs is known{grounded}, so I call it.",
        "Next I use {tool}{grounded}.",
        "{tool} is the step that gets this done{grounded}; I call it.",
        "Time to run {tool}{grounded}.",
        "Nothing is missing for {tool}{grounded}, so I go ahead with it.",
        "{tool} comes next{grounded}.",
        "With the details in hand{grounded}, {tool} is what answers this.",
        "I go on with {tool}{grounded}.",
        "The quickest way forward is {tool}{grounded}.",
        "Calling {tool}{grounded} moves the request forward.",
        "{tool} is the right call at this point{grounded}.",
    ),
    # why the arguments are known: what the user said, or what an earlier result returned
    "grounded": (
        ": they said {pairs}",
        ", with {pairs} straight from the customer",
        " ({pairs}, in the customer's words)",
        ", since the customer mentioned {pairs}",
        " on {pairs}, which they gave me",
        ": {pairs}, stated earlier",
        " ({names} given by the customer)",
        ", taking {pairs} from the chat",
        " ({names} came up in the conversation)",
        ": the user gave {pairs}",
        " with {pairs} from what the user said",
        " ({pairs}, as the user told me)",
        ", using {pairs}",
    ),
    # the same, for values an earlier tool result returned (not the user)
    "grounded_tool": (
        ", with {pairs} from what came back before",
        ": the previous look-up returned {pairs}",
        " ({pairs}, taken from the results)",
        ", using {pairs} that a tool already gave me",
        " with {pairs} from an earlier result",
        ", using {pairs}, which a look-up returned",
        " ({pairs}, as the tools showed)",
        ": the results so far give {pairs}",
    ),
    "think_done": (
        "Everything asked for is finished ({names}); time to tell the customer.",
        "{names} came back fine; I explain the outcome in plain terms.",
        "All calls are back ({names}); a short summary closes the request.",
        "The results from {names} answer the request; I share them.",
        "Done with {names}. The customer should hear what it means for them.",
        "{names} returned what was needed, so I close with a summary.",
        "The work is complete ({names}); I relay the key details.",
        "The request is handled ({names}); I summarise what the tools returned.",
        "{names} went through; I tell the user what the results say.",
        "Nothing is left to do after {names}; I report the outcome with its details.",
        "With {names} done, the user's request is complete; I give them the details.",
        "{names} answered; what is left is telling the user the result.",
        "The tools have answered ({names}); the user now hears the outcome, details included.",
        "After {names} there is nothing more to run; I pass the results on.",
        "That settles it: {names} returned, and I explain to the user what came back.",
        "No step is left after {names}; the user gets a clear summary of the outcome.",
        "{names} finished, so I wrap up with what the results show.",
        "My part is done ({names}); I put the results into plain words for the user.",
    ),
    "think_retry": (
        "{tool} failed with {code} ({message}); it is retryable, so I call it again "
        "(attempt {attempt} of {attempts}).",
        "That was a transient {code} from {tool} ({message}); I try once more (attempt "
        "{attempt} of {attempts}).",
        "{tool} did not go through ({code}: {message}), which can pass; attempt {attempt} of "
        "{attempts}.",
        "A {code} ({message}) is usually temporary, so {tool} gets another try, attempt "
        "{attempt} of {attempts}.",
    ),
    "think_empty": (
        "{tool} returned no results; I tell the user and offer alternatives.",
        "Nothing came back from {tool}; I say so and suggest another search.",
        "{tool} found nothing for these details, so I offer to search again or change them.",
        "An empty answer from {tool} is worth telling the user; a different search may work.",
    ),
    "think_refused": (
        "{tool} was refused with {code} ({message}); this is a rule, not a glitch, so I "
        "explain it and offer alternatives.",
        "A rule blocks {tool} ({code}: {message}); retrying would not help, so I explain it and "
        "suggest other options.",
        "{tool} is not allowed here ({message}); I tell the user why and what they can do instead.",
        "The backend turned {tool} down for a reason ({code}: {message}); I pass the reason on "
        "with what can be done.",
    ),
    # reports the outcome: each carries a completion cue
    "did": (
        "All done. Here is what I did: {facts}.",
        "All done! Here's what I did: {facts}.",
        "You're all set. Here is what I did: {facts}.",
        "That is done now. Summary: {facts}.",
        "Your request has been handled. For your records: {facts}.",
        "It is done now. The details: {facts}.",
        "Everything has been processed. Here is the outcome: {facts}.",
        "That has been taken care of. What I did: {facts}.",
        "Completed successfully. Here are the details: {facts}.",
        "Your request is done. The particulars: {facts}.",
        "That went through successfully. In short: {facts}.",
        "Good news, it is done. For reference: {facts}.",
        "All done on my side. Recap: {facts}.",
        "That has been sorted. What came back: {facts}.",
        "It went through successfully; the details are {facts}.",
        "Done! You're all set: {facts}.",
        "That's all done for you. Key details: {facts}.",
        "Great news, it went through successfully. Keep these handy: {facts}.",
        "Okay, that is done now: {facts}.",
        "It's all done. Note the following: {facts}.",
        "You are all set. Worth keeping: {facts}.",
        "Sorted, it went through successfully. What you need to know: {facts}.",
        "That is done now, so nothing more is needed from you. Details: {facts}.",
        "All done, and it went smoothly. Here's the summary: {facts}.",
        "Good, that went through successfully. For your notes: {facts}.",
        "Consider it done: you're all set. Here's what changed: {facts}.",
        "Finished. It is now in the system: {facts}.",
        "Right, that's all done. Your details: {facts}.",
    ),
    # one tool's result inside a report (never a completion claim of its own); {what} is
    # what the tool acts on ("the reservation")
    "result": (
        "{what}: {facts}",
        "{what}: {facts}",
        "for {what}, {facts}",
        "{facts}",
        "{facts}",
        "in {what}, {facts}",
        "on {what}, {facts}",
        "as for {what}, {facts}",
        "about {what}: {facts}",
        "regarding {what}, {facts}",
        "{what} - {facts}",
    ),
    # a success line before the facts, beside SGD's (each carries a completion cue)
    "success": (
        "Done, you're all set.",
        "That went through successfully.",
        "Everything is done on my side.",
        "Good news: it is done.",
        "Your request went through successfully.",
        "All done, that was quick.",
        "Right, that's all done now.",
        "It's all done now.",
    ),
    # follows an SGD success line ("You're all set."), which carries the completion cue
    "did_body": (
        "Here is what I did: {facts}.",
        "The details: {facts}.",
        "For your records: {facts}.",
        "Summary: {facts}.",
        "What went through: {facts}.",
        "Here are the details: {facts}.",
        "Keep these for reference: {facts}.",
        "Worth noting: {facts}.",
        "In brief: {facts}.",
        "The particulars are {facts}.",
    ),
    "found": (
        "All done. Here is what I found: {facts}.",
        "Here's what I found: {facts}.",
        "Here is what I found for you: {facts}.",
        "I looked it up. Here is what I found: {facts}.",
        "Here's what I found in the records: {facts}.",
        "Your question is now answered. This is what came back: {facts}.",
        "I checked for you, and here is what I found: {facts}.",
        "Good news, the look-up worked. Here's what I found: {facts}.",
        "The search is done. Results: {facts}.",
        "That is now looked up. In short: {facts}.",
        "Here is what I found on my end: {facts}.",
        "I've checked, and here's what I found: {facts}.",
        "The look-up is now complete. Here's what it says: {facts}.",
        "Here is what I found when I checked: {facts}.",
        "Okay, the check is done. It shows {facts}.",
        "I pulled up the record, and here's what I found: {facts}.",
        "The look-up is done: {facts}.",
        "Right, here's what I found after checking: {facts}.",
        "My check is done, and the system shows {facts}.",
    ),
    # checks a slot the user stated differently from before; ends with a confirmation cue
    "stale": (
        "Just to check before I continue: you asked for {slot} {value}. Shall I go ahead with "
        "that?",
        "Before I go on: you mentioned {slot} {value}. Should I use that?",
        "Quick check: is it {slot} {value} you want? Shall I continue with that?",
        "I want to be sure I have this right: {slot} {value}. Do you want me to go ahead with it?",
        "One thing to confirm first: you'd like {slot} {value}, right? Should I use that?",
        "Let me double-check: {slot} {value} is what you want? Shall I go on with it?",
        "You said {slot} {value} just now. Should I go with that one?",
        "Small check: the {slot} should be {value}, right? Shall I use it?",
        "I heard {slot} {value}. Do you want me to use that?",
        "So it's {slot} {value} now? Want me to continue with that?",
    ),
}


def say(act: str, rng: random.Random, *, capital: bool = True, **values: str) -> str:
    """One realisation of an assistant ``act`` (a key of `ASSISTANT`, or ``success`` /
    ``req_more`` from the phrasebank), filled in; with ``capital``, it opens with a capital
    (a snake_case tool name keeps its case)."""
    text = rng.choice(variants(act, assistant=True)).format(**values)
    first = text.split(" ", 1)[0]
    return text if "_" in first or not capital else text[:1].upper() + text[1:]


_OPENERS = (
    "I would like to {objective}",
    "I'd like to {objective}",
    "I need to {objective}",
    "Could you help me {objective}?",
    "Can you help me {objective}?",
    "I want to {objective}",
    "Hi there, I'm hoping to {objective}",
    "I'm trying to {objective}",
    "I'm looking to {objective}",
    "Is it possible to {objective}?",
    "Please help me {objective}",
    "I was hoping you could help me {objective}",
    "Would you be able to help me {objective}?",
    "I'm wondering if you can help me {objective}",
    "Quick one: I need to {objective}",
    "I've been meaning to {objective}",
    "I have a request: I'd like to {objective}",
    "Can we {objective}?",
    "Hey, I'd like to {objective}",
    "I'm hoping you can help me {objective}",
    "Is there a way to {objective}?",
    "I'd really like to {objective}",
    "Right, I need to {objective}",
    "My request: I want to {objective}",
    "Could we {objective}, please?",
    "I'm getting in touch because I need to {objective}",
    "Would it be possible to {objective}?",
    "Okay, so I want to {objective}",
    "Here's my problem: I need to {objective}",
    "I'm after some help. I need to {objective}",
    "So, I'm hoping to {objective}",
    "Could you sort something out for me? I need to {objective}",
    "I've got a favour to ask: can you {objective}?",
    "Any chance you could {objective}?",
    "I'm messaging because I want to {objective}",
    "Do you think you could {objective}?",
    "The thing is, I need to {objective}",
    "First time using this chat. I'd like to {objective}",
    "Morning! I need to {objective}",
    "Evening. I'd like to {objective}",
    "A friend said you could help me {objective}",
    "Let's see if you can help: I want to {objective}",
    "I'm in a bit of a rush and need to {objective}",
    "I need a hand to {objective}",
)
_FACT_FORMS = (
    "{label}: {value}",
    "my {label} is {value}",
    "the {label} is {value}",
    "{value} for the {label}",
    "{label} {value}",
    "the {label} should be {value}",
    "{value} is the {label}",
    "{value} is my {label}",
    "{label} - {value}",
    "it's {value} for the {label}",
    "{label} is {value}",
    "{label} would be {value}",
    "go with {value} as the {label}",
    "put {value} down as the {label}",
    "as for the {label}, {value}",
    "use {value} for the {label}",
    "I have {value} as my {label}",
    "for the {label} it's {value}",
    "{value}, that's the {label}",
    "the {label} should read {value}",
    "my {label}'s {value}",
)
# how often a slot with kind-specific forms ("you can reach me at ...") is said that way
NATURAL_SHARE = 0.5
_LONE_FACT_FORMS = tuple(
    f for f in _FACT_FORMS if f not in ("{label} {value}", "{label} - {value}")
)
_JOINERS = ("; ", ", ", " and ")
_LEADS = (
    "",
    "",
    "",
    "Details: ",
    "For reference, ",
    "Here are the details: ",
    "In case you need it, ",
    "Some details: ",
    "So you have it: ",
    "To save time, ",
    "FYI, ",
    "Here's the info: ",
    "You'll probably need these: ",
    "A few details, ",
    "If it helps, ",
    "Just so you know, ",
    "Before you ask, ",
    "Oh, and ",
    "Let me give you what I have: ",
    "Info you might want: ",
    "Off the top of my head, ",
    "The basics: ",
)
# a second sentence for the rest of the values, when there are several
_SECOND = (
    "Also, ",
    "Oh, and ",
    "Plus, ",
    "And ",
    "Besides that, ",
    "One more thing: ",
    "On top of that, ",
    "I almost forgot: ",
    "Another thing, ",
    "While I think of it, ",
)


# second sentences that may follow an act's realisation (none of them says no)
_TAILS: dict[str, tuple[str, ...]] = {
    "agree": (
        "Thanks.",
        "That's what I want.",
        "I appreciate it.",
        "Let me know once it's done.",
        "The sooner the better.",
        "Thanks for checking with me.",
        "That works for me.",
        "Much obliged.",
        "I've been meaning to sort this out.",
        "Good to have that settled.",
        "Cheers.",
        "I was hoping you'd say that.",
        "All of it looks right to me.",
        "Please send me a confirmation.",
        "Fingers crossed.",
        "Nice and simple.",
        "I'll wait for your update.",
    ),
    "thanks_done": (
        "Have a good day.",
        "Bye!",
        "Take care.",
        "You've been very helpful.",
        "That was quick.",
        "Have a nice evening.",
        "Appreciate the quick turnaround.",
        "Talk to you later.",
        "Glad that's sorted.",
        "That's a weight off my mind.",
        "I'll keep an eye out for the email.",
        "Easier than I expected.",
        "Off to tell the family.",
        "Have a great weekend.",
        "I'll be in touch if anything changes.",
    ),
    "thanks_declined": ("Bye for now.", "Have a good day.", "Maybe another time.", "Take care."),
}


# acts whose realisations include the SGD phrasebank's (crowd-written, CC BY-SA 4.0)
_MINED: dict[str, tuple[str, ...]] = {
    "agree": ("agree",),
    "thanks_done": ("thanks",),
    "no_more": ("no_thanks",),
    "thanks_declined": ("no_thanks",),
    "ask": ("ask",),
    "confirm_lead": ("confirm_lead",),
    "req_more": ("req_more",),
}
PHRASES["no_more"] = ("No, that's all, thanks.", "No thanks, that covers it.")
ASSISTANT_ONLY_MINED = ("success", "req_more", "confirm_lead")


def variants(act: str, *, assistant: bool = False) -> tuple[str, ...]:
    """Every realisation of ``act``: the hand-written ones, then the mined ones.

    A mined ``ask`` names the slots as ``{label}`` (no article): it is written here with
    ``{names}``, the labels without "the".
    """
    own = (ASSISTANT if assistant else PHRASES).get(act, ())
    bank = load_phrasebank()
    mined = tuple(t for category in _MINED.get(act, ()) for t in bank[category])
    if act == "ask":
        mined = tuple(t.replace("{label}", "{names}") for t in mined)
    if act in ASSISTANT_ONLY_MINED:
        mined = bank[act]
    return own + mined


def pick(act: str, rng: random.Random) -> str:
    """One realisation of ``act`` (a key of `PHRASES`, hand-written or mined from SGD); for
    some acts, now and then with a second sentence, so that a short reply repeats less across
    conversations."""
    text = rng.choice(variants(act))
    tails = _TAILS.get(act)
    if act == "agree":  # or an SGD thank-you that does not take leave
        tails = (*_TAILS["agree"], *_thanks_in_passing())
    # a goodbye is short more often than not; a yes now and then says thanks too
    if tails and rng.random() < (0.3 if act == "thanks_done" else 0.6):
        text = f"{text} {rng.choice(tails)}"
    return text


_LEAVE_TAKING = re.compile(
    r"\b(all|bye|goodbye|it|everything|now|need|needed|set|later|day|night|go|done|enough|else|"
    r"anything|more|today|good|great|fine|perfect)\b",
    re.IGNORECASE,
)


@cache
def _thanks_in_passing() -> tuple[str, ...]:
    """The phrasebank's thank-yous that do not end the conversation ("Thanks a lot.")."""
    return tuple(t for t in load_phrasebank()["thanks"] if not _LEAVE_TAKING.search(t))


def objective_sentence(objective: str, rng: random.Random) -> str:
    """The opening request, phrased one of several ways (a first-person objective as is)."""
    first = objective.split()[0].casefold() if objective.split() else ""
    if first in ("i", "my", "i'd", "i'm"):
        text = objective
    else:
        objective = objective.rstrip(" .!?")
        text = rng.choice(_OPENERS).format(objective=objective[0].lower() + objective[1:])
        text = text if text.endswith("?") else text + "."
    return text


def answer_sentence(value: str, rng: random.Random, forms: tuple[str, ...] = ()) -> str:
    """One value given on its own, as SGD users answer a question ("It's 503-555-0142."),
    or now and then in one of its kind's ``forms`` ("You can reach me at 503-555-0142.")."""
    if forms and rng.random() < NATURAL_SHARE:
        text = rng.choice(forms).format(value=value) + "."
    else:
        text = rng.choice(load_phrasebank()["inform"]).format(value=value)
    return text[:1].upper() + text[1:]


class Fact(NamedTuple):
    """One slot value the user gives: its label, the value as said, and the ways its kind
    allows saying it (:func:`simulation.agents.slot_forms.slot_forms`, user voice)."""

    label: str
    value: str
    forms: tuple[str, ...] = ()


def _fact_text(fact: Fact, rng: random.Random, *, alone: bool) -> str:
    label, value, forms = Fact(*fact)
    if forms and rng.random() < NATURAL_SHARE:
        return rng.choice(forms).format(value=value)
    return rng.choice(_LONE_FACT_FORMS if alone else _FACT_FORMS).format(label=label, value=value)


def facts_sentence(facts: list[Fact] | list[tuple[str, str]], rng: random.Random) -> str:
    """Slot values as one sentence: seeded order, form per value (a kind-specific one now
    and then), joiner and lead-in."""
    if not facts:
        return ""
    order = list(facts)
    rng.shuffle(order)
    # a lone "Date May 28th." reads like the assistant's words to the role-confusion check:
    # one value on its own gets a form with a verb or a colon
    split = len(order) >= 3 and rng.random() < 0.25
    cut = len(order) // 2 if split else len(order)
    parts = [
        _fact_text(fact, rng, alone=(cut if i < cut else len(order) - cut) == 1)
        for i, fact in enumerate(order)
    ]
    first, second = parts[:cut], parts[cut:]
    text = rng.choice(_LEADS) + _joined(first, rng)
    text = text[0].upper() + text[1:] + "."
    if second:
        rest = rng.choice(_SECOND) + _joined(second, rng)
        text += " " + rest[0].upper() + rest[1:] + "."
    return text


def _joined(parts: list[str], rng: random.Random) -> str:
    joiner = rng.choice(_JOINERS)
    if joiner == " and " and len(parts) >= 3:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return joiner.join(parts)
