;;; shiro-model.el --- The model, its endpoint and key for shiro.el  -*- lexical-binding: t; -*-

;; Issue 39: `shiro-model' picks the model with `completing-read' over `shiro.models' (the
;; endpoint's list, then the settings'), or sets the one given, for this session from the next
;; request (`shiro.setModel'); "default" goes back to the setting. `shiro-model-setup' ("Set up
;; model") reads an endpoint and a key (`read-passwd') and hands them to the running server with
;; `shiro.setCredentials': kept in its memory only, never in a file (docs/emacs.md).

;;; Code:

(require 'shiro)

(defun shiro-model (&optional model)
  "Set MODEL for this session from its next request, or pick one from the endpoint's list.
\"setup\" runs `shiro-model-setup'.  The result plist of `shiro.setModel'."
  (interactive)
  (let ((name (or model
                  (let* ((result (shiro--command "shiro.models"))
                         (ids (mapcar (lambda (m) (plist-get m :id)) (append (plist-get result :models) nil)))
                         (why (plist-get result :error)))
                    (completing-read (format "Model%s: " (if (stringp why) (format " (%s)" why) ""))
                                     (append ids '("default" "setup")) nil nil nil nil
                                     (plist-get result :current))))))
    (if (equal name "setup")
        (call-interactively #'shiro-model-setup)
      (let ((result (shiro--command "shiro.setModel" (list :model name))))
        (shiro--insert (format "[model: %s%s, from the next request]\n" (plist-get result :model)
                               (if (stringp (plist-get result :effort)) (format ", effort %s" (plist-get result :effort)) ""))
                       'shiro-dim)
        result))))

(defun shiro-model-setup (base-url api-key)
  "Set up model: BASE-URL (empty keeps it) and API-KEY (empty keeps it) for the running server.
The key stays in the server's memory for its life (`shiro.setCredentials')."
  (interactive (list (read-string "Endpoint (empty: keep it; e.g. http://127.0.0.1:11434/v1): ")
                     (read-passwd "API key (empty: keep it): ")))
  (let ((args (append (and (not (string-empty-p (string-trim base-url))) (list :baseUrl (string-trim base-url)))
                      (and (not (string-empty-p (string-trim api-key))) (list :apiKey (string-trim api-key))))))
    (when args
      (let ((result (shiro--command "shiro.setCredentials" args)))
        (shiro--insert (format "[set up: %s, model %s]\n" (or (plist-get result :baseUrl) "OpenAI") (plist-get result :model))
                       'shiro-dim)
        result))))

(provide 'shiro-model)
;;; shiro-model.el ends here
