// Keyboard shortcuts of the pair page. Letters act only outside text boxes, so typing a
// reason never picks an answer.
(function () {
  "use strict";
  var form = document.getElementById("answer-form");
  if (!form) { return; }
  var reason = document.getElementById("reason");
  var tags = form.querySelectorAll("input[name=tag]");
  function pick(id) { var box = document.getElementById(id); if (box) { box.checked = true; } }
  function send() {
    if (!form.querySelector("input[name=choice]:checked")) { document.getElementById("choice-left").reportValidity(); return; }
    form.requestSubmit();
  }
  document.addEventListener("keydown", function (event) {
    var typing = event.target && (event.target.tagName === "TEXTAREA" || event.target.tagName === "INPUT" && event.target.type === "text");
    if (typing) {
      if (event.key === "Escape") { event.target.blur(); }
      else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); send(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var key = event.key.toLowerCase();
    if (key === "a") { pick("choice-left"); }
    else if (key === "b") { pick("choice-right"); }
    else if (key === "n") { pick("choice-none"); }
    else if (key === "r") { event.preventDefault(); reason.focus(); }
    else if (key >= "1" && key <= "9" && tags[Number(key) - 1]) { var t = tags[Number(key) - 1]; t.checked = !t.checked; }
    else if (key === "enter") { event.preventDefault(); send(); }
    else if (key === "backspace") { var back = document.getElementById("back"); if (back) { event.preventDefault(); back.click(); } }
    else { return; }
  });
}());
