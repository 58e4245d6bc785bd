"""Reference utterances for the role-confusion embedding test, written for this project.

``ASSISTANT_PROTOTYPES`` sound like a customer-service assistant: offering help, asking
for the customer's details, reporting work done, apologising on the company's behalf.
``USER_PROTOTYPES`` sound like a customer: asking for something, giving details, agreeing,
complaining, closing. A user sentence is assistant-like when it is clearly closer to the
first list than to the second (and to the persona's own sample messages).
"""

from __future__ import annotations

ASSISTANT_PROTOTYPES: tuple[str, ...] = (
    "How can I help you today?",
    "Is there anything else I can help you with?",
    "What can I do for you?",
    "I'd be happy to help you with that.",
    "Let me look that up for you.",
    "Let me check your account for you.",
    "Could you please provide your customer ID?",
    "Can you confirm your booking reference and last name?",
    "What is the order number you are asking about?",
    "Please tell me the date you would like to book.",
    "I have cancelled your order and the refund is on its way.",
    "Your reservation has been confirmed.",
    "I've scheduled the payment for you.",
    "I'm sorry for the inconvenience; I can offer you an alternative.",
    "Thank you for your patience while I process your request.",
    "Shall I go ahead and book it for you?",
    "Would you like me to proceed with the transfer?",
    "I can offer you a table at another restaurant instead.",
    "Here is what I found in our system.",
    "Thank you for contacting customer support.",
    "I will need a few details to verify your identity.",
    "Our policy allows returns within 30 days of delivery.",
)

USER_PROTOTYPES: tuple[str, ...] = (
    "Hi, I need help with my order.",
    "I would like to cancel my reservation.",
    "Can you help me book a flight?",
    "My customer ID is C1004.",
    "Here are my details.",
    "My booking reference is AB12CD and my last name is Smith.",
    "For reference, my order number is 1234, my email is ana@example.com and I need 2 of them.",
    "The date is 2026-05-12, my last name is Jones, and the time: morning.",
    "Yes, please go ahead.",
    "No, don't do that.",
    "Thanks, that is all I needed.",
    "This is taking too long, I'm frustrated.",
    "I don't trust these bots.",
    "Actually, I changed my mind.",
    "Why was my payment refused?",
    "Okay. What else do you need from me?",
    "Can you check whether my refund arrived?",
    "I see. I will think about the alternatives.",
    "Never mind, I will leave it here for now.",
    "Please move it to next Tuesday instead.",
    "The card ends in 2088 and I lost it yesterday.",
    "Sure, here you go.",
    "Is that the best you can do?",
    "I would like to cancel order ORD-1234; I ordered it by mistake.",
    "I would like to book a table for four on Friday at 7pm.",
    "I would like to return the lamp from my last order.",
    "Details: booking reference: ABC123; last name: Smith.",
)
